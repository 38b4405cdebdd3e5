// The ray tracer's scene: the reader says where a file is wrong; the scene survives the archive
// with its classes and its shared materials; a corrupt mesh payload is refused.
#include "render.hpp"
#include "scene_file.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace raytracer;

namespace {

std::string error_of(const std::string& text) {
  try {
    (void)parse_scene(text, "t.scene");
  } catch (const scene_error& e) {
    return e.what();
  }
  return "no error";
}

const char* const small_scene = R"(
material m matte 0.5 0.5 0.5
material shiny mirror 1 1 1 0.5
light 0 5 0  1 1 1
sphere 0 1 3 1 m
sphere 2 1 3 1 shiny
plane 0 0 0  0 1 0  m
mesh shiny
  v 0 0 0
  v 1 0 0
  v 0 1 0
  f 0 1 2
end
)";

}  // namespace

TEST(SceneFile, ErrorsSayWhere) {
  EXPECT_EQ(error_of("sphere 0 0 0 1 nothing"), "t.scene:1:16: unknown material 'nothing' (define it with 'material' first)");
  EXPECT_EQ(error_of("\n\nsphere 0 x 0 1 m"), "t.scene:3:10: expected the centre (a number), found 'x'");
  EXPECT_EQ(error_of("material m matte 1 1"), "t.scene:1:21: expected a colour component (a number), found the end of the line");
  EXPECT_EQ(error_of("material m glass 1 1 1"), "t.scene:1:12: unknown material kind 'glass' (matte, checker or mirror)");
  EXPECT_EQ(error_of("material m matte 1 1 1\nsphere 0 0 0 -1 m"), "t.scene:2:14: the radius must be positive");
  EXPECT_EQ(error_of("teapot"), "t.scene:1:1: unknown directive 'teapot'");
  EXPECT_EQ(error_of("material m matte 1 1 1\nmesh m\n v 0 0 0\n f 0 1 2\nend"),
            "t.scene:4:6: vertex 1 is not defined yet (1 so far)");
  EXPECT_EQ(error_of("material m matte 1 1 1\nmesh m\n v 0 0 0\n"),
            "t.scene:4:1: the file ends inside the mesh opened on line 2 (missing 'end')");
  EXPECT_EQ(error_of("material m matte 1 1 1\nsphere 0 0 0 1 m extra"), "t.scene:2:18: unexpected 'extra' at the end of the directive");
  EXPECT_EQ(error_of("# nothing\n"), "t.scene: the scene has no objects");
  EXPECT_EQ(error_of("depth 2.5"), "t.scene:1:7: the reflection depth must be a whole number from 0 to 16");
}

TEST(SceneArchive, ClassesAndSharedMaterialsSurvive) {
  const scene s = parse_scene(small_scene, "small");
  const cppless::byte_buffer bytes = cppless::to_bytes(s);
  scene back;
  cppless::from_bytes(bytes.span(), back);
  ASSERT_EQ(back.objects.size(), 4u);
  EXPECT_NE(dynamic_cast<const sphere*>(back.objects[0].get()), nullptr);
  EXPECT_NE(dynamic_cast<const plane*>(back.objects[2].get()), nullptr);
  EXPECT_NE(dynamic_cast<const triangle_mesh*>(back.objects[3].get()), nullptr);
  EXPECT_NE(dynamic_cast<const mirror*>(back.objects[1]->surface.get()), nullptr);
  // One material object, shared by the scene's list, the first sphere and the plane.
  EXPECT_EQ(back.objects[0]->surface.get(), back.materials[0].get());
  EXPECT_EQ(back.objects[2]->surface.get(), back.materials[0].get());
  EXPECT_EQ(back.objects[3]->surface.get(), back.materials[1].get());
  // And it renders the same.
  EXPECT_EQ(render_serial(s, 24, 16, 8), render_serial(back, 24, 16, 8));
}

TEST(SceneArchive, MeshFaceOutsideItsVerticesIsRefused) {
  scene s = parse_scene(small_scene, "small");
  auto* mesh = dynamic_cast<triangle_mesh*>(s.objects[3].get());
  ASSERT_NE(mesh, nullptr);
  mesh->faces[0][2] = 3;  // only 3 vertices
  const cppless::byte_buffer bytes = cppless::to_bytes(s);
  scene back;
  EXPECT_THROW(cppless::from_bytes(bytes.span(), back), cppless::decode_error);
}

TEST(Render, TilesCoverTheImageOnce) {
  const auto tiles = tiles_of(50, 30, 16);
  std::vector<int> covered(50 * 30);
  for (const tile& t : tiles)
    for (int y = t.y0; y < t.y0 + t.height; ++y)
      for (int x = t.x0; x < t.x0 + t.width; ++x) ++covered[y * 50 + x];
  for (int c : covered) ASSERT_EQ(c, 1);
}
