// The ray tracer's scene: polymorphic objects (spheres, planes, triangle meshes) and materials
// (matte, checker, mirror) behind std::unique_ptr<object> and std::shared_ptr<material>. Objects
// share materials; the scene travels with each offloaded tile and arrives with the sharing
// intact (cppless keeps shared_ptr identity within a payload) and every class intact (each
// derived class is registered once with CPPLESS_REGISTER_TYPE, in scene.cpp).
#pragma once

#include <cppless/archive.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace raytracer {

struct vec3 {
  double x = 0, y = 0, z = 0;
  template <class A>
  void serialize(A& ar) {
    ar(x, y, z);
  }
};
inline vec3 operator+(vec3 a, vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline vec3 operator-(vec3 a, vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline vec3 operator*(vec3 a, double s) { return {a.x * s, a.y * s, a.z * s}; }
inline vec3 operator*(vec3 a, vec3 b) { return {a.x * b.x, a.y * b.y, a.z * b.z}; }
inline double dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline vec3 cross(vec3 a, vec3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
inline double length(vec3 a) { return std::sqrt(dot(a, a)); }
inline vec3 normalize(vec3 a) {
  const double l = length(a);
  return l > 0 ? a * (1.0 / l) : a;
}

struct ray {
  vec3 origin, direction;  // direction normalized
};

class scene;
struct hit;

// How a surface answers light. shade() may trace further rays (mirror) through the scene.
struct material {
  virtual ~material() = default;
  [[nodiscard]] virtual vec3 shade(const scene& s, const ray& r, const hit& h, int depth) const = 0;
  template <class A>
  void serialize(A&) {}
};

struct hit {
  double t = 0;
  vec3 point, normal;
  const material* surface = nullptr;
};

// Something a ray can hit.
struct object {
  virtual ~object() = default;
  [[nodiscard]] virtual bool intersect(const ray& r, double t_max, hit& h) const = 0;
  std::shared_ptr<const material> surface;
  template <class A>
  void serialize(A& ar) {
    ar(surface);
  }
};

struct sphere : object {
  vec3 center;
  double radius = 1;
  bool intersect(const ray& r, double t_max, hit& h) const override;
  template <class A>
  void serialize(A& ar) {
    object::serialize(ar);
    ar(center, radius);
  }
};

struct plane : object {
  vec3 point, normal{0, 1, 0};
  bool intersect(const ray& r, double t_max, hit& h) const override;
  template <class A>
  void serialize(A& ar) {
    object::serialize(ar);
    ar(point, normal);
  }
};

// Triangles indexing a vertex list, behind a bounding sphere. Loading checks every index, so a
// corrupt payload cannot make the renderer read outside the vertices.
struct triangle_mesh : object {
  std::vector<vec3> vertices;
  std::vector<std::array<std::uint32_t, 3>> faces;
  vec3 bound_center;
  double bound_radius = 0;
  void finish();  // computes the bounding sphere
  bool intersect(const ray& r, double t_max, hit& h) const override;
  template <class A>
  void serialize(A& ar) {
    object::serialize(ar);
    ar(vertices, faces);
    if constexpr (A::is_loading::value) {
      for (const auto& f : faces)
        for (std::uint32_t i : f)
          if (i >= vertices.size()) throw cppless::decode_error("triangle_mesh: a face refers to a vertex it does not have");
      finish();
    }
  }
};

struct matte : material {
  vec3 color{0.8, 0.8, 0.8};
  vec3 shade(const scene& s, const ray& r, const hit& h, int depth) const override;
  template <class A>
  void serialize(A& ar) {
    ar(color);
  }
};

struct checker : material {
  vec3 even{0.9, 0.9, 0.9}, odd{0.1, 0.1, 0.1};
  double size = 1;
  vec3 shade(const scene& s, const ray& r, const hit& h, int depth) const override;
  template <class A>
  void serialize(A& ar) {
    ar(even, odd, size);
  }
};

struct mirror : material {
  vec3 tint{0.9, 0.9, 0.9};
  double reflectivity = 0.8;
  vec3 shade(const scene& s, const ray& r, const hit& h, int depth) const override;
  template <class A>
  void serialize(A& ar) {
    ar(tint, reflectivity);
  }
};

struct light {
  vec3 position, color{1, 1, 1};
  template <class A>
  void serialize(A& ar) {
    ar(position, color);
  }
};

struct camera {
  vec3 eye{0, 1, -5}, look_at{0, 1, 0}, up{0, 1, 0};
  double fov_degrees = 60;
  template <class A>
  void serialize(A& ar) {
    ar(eye, look_at, up, fov_degrees);
  }
};

class scene {
 public:
  camera view;
  vec3 background{0.05, 0.05, 0.1};
  vec3 ambient{0.1, 0.1, 0.1};
  std::vector<light> lights;
  std::vector<std::unique_ptr<object>> objects;
  std::vector<std::shared_ptr<material>> materials;  // also referenced by the objects
  int max_depth = 4;

  [[nodiscard]] bool closest(const ray& r, hit& h) const;
  [[nodiscard]] bool occluded(vec3 from, vec3 to) const;
  [[nodiscard]] vec3 trace(const ray& r, int depth) const;
  // Direct light at a point with a diffuse colour: ambient + each unshadowed light.
  [[nodiscard]] vec3 direct(const hit& h, vec3 color) const;

  template <class A>
  void serialize(A& ar) {
    ar(view, background, ambient, lights, materials, objects, max_depth);
  }
};

// Pixels of one tile, RGB bytes row by row.
struct tile {
  int x0 = 0, y0 = 0, width = 0, height = 0;
  template <class A>
  void serialize(A& ar) {
    ar(x0, y0, width, height);
  }
};
std::vector<std::uint8_t> render_tile(const scene& s, int image_width, int image_height, tile t);

// Splits an image into tiles of at most `size` x `size` pixels, row-major.
std::vector<tile> tiles_of(int image_width, int image_height, int size);

}  // namespace raytracer
