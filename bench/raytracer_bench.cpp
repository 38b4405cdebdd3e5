// bench_raytracer: the ray tracer (examples/raytracer) rendered serially, on std::thread (one
// thread per core pulling tiles), with cppless local workers capturing the scene in every call,
// and with the scene pre-serialized (cppless::preserialized: encoded once, decoded once per
// worker). Two scenes: the demo scene (small: ~2 KB encoded) and the same with a large triangle
// mesh (~0.5 MB encoded), where encoding/decoding the scene per call starts to count.
// The contenders take turns round by round, so drifting machine load hits all alike. Each
// cppless image is compared with the serial one (a difference is reported, never hidden).
//
//   bench_raytracer [--quick] [--scene examples/raytracer/scenes/demo.scene] [--repeat N]
//
// One JSON line per run: {"suite":"raytracer","case":..,"mode":..,"repeat":r,"seconds":..,...}
#include "render.hpp"
#include "scene_file.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace {

const char* option(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

template <class F>
double seconds(F&& f, raytracer::image& out) {
  const auto t0 = std::chrono::steady_clock::now();
  out = f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) quick = quick || std::strcmp(argv[i], "--quick") == 0;
  const std::string source_dir = CPPLESS_SOURCE_DIR;
  const std::string scene_path = option(argc, argv, "--scene", (source_dir + "/examples/raytracer/scenes/demo.scene").c_str());
  const int repeat = std::atoi(option(argc, argv, "--repeat", quick ? "2" : "5"));
  const int width = quick ? 240 : 480, height = quick ? 180 : 360, tile = quick ? 40 : 60;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());

  const std::string demo = read_file(scene_path);
  struct scene_case {
    const char* name;
    std::string text;
  };
  // The large case: a finely tessellated ball (2 * 100^2 triangles), small in the picture.
  const scene_case cases[] = {{"demo", demo}, {"large_mesh", demo + "\nball_mesh -0.6 0.25 -1.5 0.25 100 gold\n"}};

  cppless::local_dispatcher dispatcher;
  auto instance = dispatcher.create_instance();

  for (const scene_case& c : cases) {
    auto scene = std::make_shared<const raytracer::scene>(raytracer::parse_scene(c.text, c.name));
    const std::size_t scene_bytes = cppless::to_bytes(*scene).size();
    const std::size_t tiles = raytracer::tiles_of(width, height, tile).size();
    raytracer::image reference = raytracer::render_serial(*scene, width, height, tile);  // also warms caches
    {  // warm the workers (first calls start processes and fault in the code)
      raytracer::image warm;
      (void)seconds([&] { return raytracer::render_offloaded(instance, scene, 64, 48, 16); }, warm);
    }
    const unsigned workers = dispatcher.worker_count();
    for (int r = 0; r < repeat; ++r) {
      const auto emit = [&](const char* mode, double s, unsigned parallel, const raytracer::image& img) {
        std::printf("{\"suite\":\"raytracer\",\"case\":\"%s\",\"mode\":\"%s\",\"repeat\":%d,\"seconds\":%.6f,"
                    "\"parallel\":%u,\"tiles\":%zu,\"width\":%d,\"height\":%d,\"objects\":%zu,\"scene_bytes\":%zu,"
                    "\"equal_to_serial\":%s}\n",
                    c.name, mode, r, s, parallel, tiles, width, height, scene->objects.size(), scene_bytes,
                    img == reference ? "true" : "false");
        std::fflush(stdout);
      };
      raytracer::image img;
      double s = seconds([&] { return raytracer::render_serial(*scene, width, height, tile); }, img);
      emit("serial", s, 1, img);
      s = seconds([&] { return raytracer::render_threads(*scene, width, height, tile, cores); }, img);
      emit("threads", s, cores, img);
      s = seconds([&] { return raytracer::render_offloaded(instance, scene, width, height, tile); }, img);
      emit("cppless", s, workers, img);
      // Timed from the encoding on: what a program pays for it.
      s = seconds(
          [&] {
            const cppless::preserialized<raytracer::scene> pre(scene);
            return raytracer::render_offloaded_preserialized(instance, pre, width, height, tile);
          },
          img);
      emit("cppless_preserialized", s, workers, img);
    }
  }
  return 0;
}
