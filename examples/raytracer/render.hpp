// Rendering a whole image three ways, for the example and its benchmark: serially, on std::thread
// (threads pulling tiles), and offloaded with cppless (one call per tile, each a lambda capturing
// the scene, or a handle to it encoded once: render_offloaded_preserialized).
#pragma once

#include "scene.hpp"

#include <cppless/cppless.hpp>
#include <cppless/preserialized.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace raytracer {

struct image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  // row-major, 3 bytes per pixel
  bool operator==(const image&) const = default;
};

inline void place(image& img, const tile& t, const std::vector<std::uint8_t>& pixels) {
  for (int row = 0; row < t.height; ++row)
    std::memcpy(&img.rgb[(static_cast<std::size_t>(t.y0 + row) * img.width + t.x0) * 3],
                &pixels[static_cast<std::size_t>(row) * t.width * 3], static_cast<std::size_t>(t.width) * 3);
}

inline image blank(int width, int height) { return {width, height, std::vector<std::uint8_t>(std::size_t(width) * height * 3)}; }

inline image render_serial(const scene& s, int width, int height, int tile_size) {
  image img = blank(width, height);
  for (const tile& t : tiles_of(width, height, tile_size)) place(img, t, render_tile(s, width, height, t));
  return img;
}

inline image render_threads(const scene& s, int width, int height, int tile_size, unsigned threads) {
  image img = blank(width, height);
  const std::vector<tile> tiles = tiles_of(width, height, tile_size);
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < threads; ++i)
    pool.emplace_back([&] {
      for (std::size_t k; (k = next.fetch_add(1)) < tiles.size();) place(img, tiles[k], render_tile(s, width, height, tiles[k]));
    });
  for (auto& t : pool) t.join();
  return img;
}

using render_config = cppless::config<cppless::with_memory<1024>, cppless::with_timeout<120>>;

// Each call carries the whole scene (its objects, shared materials and meshes).
inline image render_offloaded(cppless::instance& inst, std::shared_ptr<const scene> s, int width, int height, int tile_size) {
  image img = blank(width, height);
  const std::vector<tile> tiles = tiles_of(width, height, tile_size);
  std::vector<std::vector<std::uint8_t>> parts(tiles.size());
  auto fn = [s, width, height](tile t) { return render_tile(*s, width, height, t); };
  for (std::size_t k = 0; k < tiles.size(); ++k) cppless::dispatch<render_config>(inst, fn, parts[k], tiles[k]);
  cppless::wait(inst, tiles.size());
  for (std::size_t k = 0; k < tiles.size(); ++k) place(img, tiles[k], parts[k]);
  return img;
}

// The scene encoded once on the host; each worker decodes it once and keeps it across calls.
inline image render_offloaded_preserialized(cppless::instance& inst, const cppless::preserialized<scene>& s, int width,
                                            int height, int tile_size) {
  image img = blank(width, height);
  const std::vector<tile> tiles = tiles_of(width, height, tile_size);
  std::vector<std::vector<std::uint8_t>> parts(tiles.size());
  auto fn = [s, width, height](tile t) { return render_tile(s.get(), width, height, t); };
  for (std::size_t k = 0; k < tiles.size(); ++k) cppless::dispatch<render_config>(inst, fn, parts[k], tiles[k]);
  cppless::wait(inst, tiles.size());
  for (std::size_t k = 0; k < tiles.size(); ++k) place(img, tiles[k], parts[k]);
  return img;
}

}  // namespace raytracer
