// Reading a ray tracer scene from a text file. One directive per line, '#' starts a comment:
//
//   camera   EYE(x y z) LOOK_AT(x y z) FOV
//   background r g b          ambient r g b          depth N
//   light    x y z  r g b
//   material NAME matte   r g b
//   material NAME checker r g b  r g b  SIZE
//   material NAME mirror  r g b  REFLECTIVITY
//   sphere   x y z RADIUS MATERIAL
//   plane    x y z  nx ny nz MATERIAL
//   mesh MATERIAL            then lines "v x y z" and "f i j k" (0-based), then "end"
//   ball_mesh x y z RADIUS SEGMENTS MATERIAL   (a triangulated sphere: 2 * SEGMENTS^2 triangles)
//
// A malformed file throws scene_error whose message says where: "file:line:column: what".
#pragma once

#include "scene.hpp"

#include <stdexcept>
#include <string>

namespace raytracer {

struct scene_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

scene parse_scene(const std::string& text, const std::string& name);
scene load_scene(const std::string& path);

}  // namespace raytracer
