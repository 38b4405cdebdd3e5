// The Cppless paper's ray tracer: a scene of polymorphic objects and shared materials, rendered in
// tiles, each tile a lambda capturing the scene and offloaded to local workers.
//
//   raytracer_example [--scene examples/raytracer/scenes/demo.scene] [--width 320] [--height 240]
//                     [--tile 40] [--mode serial|threads|cppless|preserialized|check] [--out image.ppm]
//
// --mode check renders serially and with cppless (plain and preserialized) and exits 1 unless the
// images are equal pixel for pixel. A malformed scene file is reported as file:line:column.
#include "render.hpp"
#include "scene_file.hpp"

#include "../common/args.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

namespace {

void write_ppm(const raytracer::image& img, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  out << "P6\n" << img.width << ' ' << img.height << "\n255\n";
  out.write(reinterpret_cast<const char*>(img.rgb.data()), static_cast<std::streamsize>(img.rgb.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

template <class F>
raytracer::image timed(const char* label, F&& render) {
  const auto t0 = std::chrono::steady_clock::now();
  raytracer::image img = render();
  std::printf("raytracer: %-14s %.3f s\n", label, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return img;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string scene_path = example::option(argc, argv, "--scene", "examples/raytracer/scenes/demo.scene");
  const int width = static_cast<int>(example::option_long(argc, argv, "--width", 320));
  const int height = static_cast<int>(example::option_long(argc, argv, "--height", 240));
  const int tile = static_cast<int>(example::option_long(argc, argv, "--tile", 40));
  const std::string mode = example::option(argc, argv, "--mode", "check");
  const char* out = example::option(argc, argv, "--out", nullptr);
  if (width <= 0 || height <= 0 || tile <= 0 || width > 16384 || height > 16384) {
    std::fprintf(stderr, "raytracer: --width, --height and --tile must be positive (at most 16384)\n");
    return 2;
  }

  std::shared_ptr<const raytracer::scene> scene;
  try {
    scene = std::make_shared<const raytracer::scene>(raytracer::load_scene(scene_path));
  } catch (const raytracer::scene_error& e) {
    std::fprintf(stderr, "raytracer: %s\n", e.what());
    return 2;
  }
  std::printf("raytracer: %zu objects, %zu materials, %dx%d pixels in tiles of %d\n", scene->objects.size(),
              scene->materials.size(), width, height, tile);

  raytracer::image result;
  int status = 0;
  if (mode == "serial") {
    result = timed("serial", [&] { return raytracer::render_serial(*scene, width, height, tile); });
  } else if (mode == "threads") {
    result = timed("std::thread", [&] {
      return raytracer::render_threads(*scene, width, height, tile, std::max(1u, std::thread::hardware_concurrency()));
    });
  } else if (mode == "cppless" || mode == "preserialized" || mode == "check") {
    cppless::local_dispatcher dispatcher;
    auto instance = dispatcher.create_instance();
    if (mode == "cppless") {
      result = timed("cppless", [&] { return raytracer::render_offloaded(instance, scene, width, height, tile); });
    } else if (mode == "preserialized") {
      const cppless::preserialized<raytracer::scene> pre(scene);
      result = timed("preserialized", [&] { return raytracer::render_offloaded_preserialized(instance, pre, width, height, tile); });
    } else {
      result = timed("serial", [&] { return raytracer::render_serial(*scene, width, height, tile); });
      const auto offloaded = timed("cppless", [&] { return raytracer::render_offloaded(instance, scene, width, height, tile); });
      const cppless::preserialized<raytracer::scene> pre(scene);
      const auto pre_img = timed("preserialized", [&] { return raytracer::render_offloaded_preserialized(instance, pre, width, height, tile); });
      const bool same = offloaded == result && pre_img == result;
      std::printf("raytracer: offloaded images %s the serial one\n", same ? "equal" : "DIFFER FROM");
      status = same ? 0 : 1;
    }
  } else {
    std::fprintf(stderr, "raytracer: unknown --mode '%s' (serial, threads, cppless, preserialized, check)\n", mode.c_str());
    return 2;
  }
  if (out) write_ppm(result, out);
  return status;
}
