// Intersections, shading and tile rendering of the ray tracer (plain Whitted-style tracing with
// shadows and mirror reflections, 2x2 fixed supersampling: deterministic, so an image rendered
// in tiles on workers equals the serial one byte for byte).
#include "scene.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

CPPLESS_REGISTER_TYPE(raytracer::sphere);
CPPLESS_REGISTER_TYPE(raytracer::plane);
CPPLESS_REGISTER_TYPE(raytracer::triangle_mesh);
CPPLESS_REGISTER_TYPE(raytracer::matte);
CPPLESS_REGISTER_TYPE(raytracer::checker);
CPPLESS_REGISTER_TYPE(raytracer::mirror);

namespace raytracer {

namespace {
constexpr double epsilon = 1e-6;
constexpr double infinity = std::numeric_limits<double>::infinity();
}  // namespace

bool sphere::intersect(const ray& r, double t_max, hit& h) const {
  const vec3 oc = r.origin - center;
  const double b = dot(oc, r.direction);
  const double c = dot(oc, oc) - radius * radius;
  const double disc = b * b - c;
  if (disc < 0) return false;
  const double root = std::sqrt(disc);
  double t = -b - root;
  if (t < epsilon) t = -b + root;
  if (t < epsilon || t >= t_max) return false;
  h.t = t;
  h.point = r.origin + r.direction * t;
  h.normal = (h.point - center) * (1.0 / radius);
  h.surface = surface.get();
  return true;
}

bool plane::intersect(const ray& r, double t_max, hit& h) const {
  const double denom = dot(normal, r.direction);
  if (std::abs(denom) < epsilon) return false;
  const double t = dot(point - r.origin, normal) / denom;
  if (t < epsilon || t >= t_max) return false;
  h.t = t;
  h.point = r.origin + r.direction * t;
  h.normal = denom < 0 ? normal : normal * -1.0;
  h.surface = surface.get();
  return true;
}

void triangle_mesh::finish() {
  vec3 sum;
  for (const vec3& v : vertices) sum = sum + v;
  bound_center = vertices.empty() ? vec3{} : sum * (1.0 / static_cast<double>(vertices.size()));
  bound_radius = 0;
  for (const vec3& v : vertices) bound_radius = std::max(bound_radius, length(v - bound_center));
}

bool triangle_mesh::intersect(const ray& r, double t_max, hit& h) const {
  // Bounding sphere first.
  const vec3 oc = r.origin - bound_center;
  const double b = dot(oc, r.direction);
  const double c = dot(oc, oc) - bound_radius * bound_radius;
  if (c > 0 && (b > 0 || b * b - c < 0)) return false;
  bool found = false;
  for (const auto& f : faces) {  // Möller–Trumbore
    const vec3 &a = vertices[f[0]], &p1 = vertices[f[1]], &p2 = vertices[f[2]];
    const vec3 e1 = p1 - a, e2 = p2 - a;
    const vec3 pv = cross(r.direction, e2);
    const double det = dot(e1, pv);
    if (std::abs(det) < epsilon) continue;
    const double inv = 1.0 / det;
    const vec3 tv = r.origin - a;
    const double u = dot(tv, pv) * inv;
    if (u < 0 || u > 1) continue;
    const vec3 qv = cross(tv, e1);
    const double v = dot(r.direction, qv) * inv;
    if (v < 0 || u + v > 1) continue;
    const double t = dot(e2, qv) * inv;
    if (t < epsilon || t >= t_max) continue;
    t_max = t;
    found = true;
    h.t = t;
    h.point = r.origin + r.direction * t;
    const vec3 n = normalize(cross(e1, e2));
    h.normal = dot(n, r.direction) < 0 ? n : n * -1.0;
    h.surface = surface.get();
  }
  return found;
}

bool scene::closest(const ray& r, hit& h) const {
  double t_max = infinity;
  bool found = false;
  for (const auto& o : objects) {
    if (o && o->intersect(r, t_max, h)) {
      t_max = h.t;
      found = true;
    }
  }
  return found;
}

bool scene::occluded(vec3 from, vec3 to) const {
  const vec3 d = to - from;
  const double dist = length(d);
  const ray shadow{from, d * (1.0 / dist)};
  hit h;
  for (const auto& o : objects)
    if (o && o->intersect(shadow, dist - epsilon, h)) return true;
  return false;
}

vec3 scene::direct(const hit& h, vec3 color) const {
  vec3 sum = ambient * color;
  const vec3 lifted = h.point + h.normal * 1e-4;
  for (const light& l : lights) {
    const vec3 to_light = l.position - h.point;
    const double lambert = dot(h.normal, normalize(to_light));
    if (lambert <= 0 || occluded(lifted, l.position)) continue;
    sum = sum + color * l.color * lambert;
  }
  return sum;
}

vec3 scene::trace(const ray& r, int depth) const {
  hit h;
  if (!closest(r, h) || h.surface == nullptr) return background;
  return h.surface->shade(*this, r, h, depth);
}

vec3 matte::shade(const scene& s, const ray&, const hit& h, int) const { return s.direct(h, color); }

vec3 checker::shade(const scene& s, const ray&, const hit& h, int) const {
  // (a small bias keeps points on a cell boundary, such as a floor at y = 0, on one side)
  const auto cell = [this](double v) { return static_cast<long long>(std::floor(v / size + 1e-7)); };
  const bool parity = ((cell(h.point.x) + cell(h.point.y) + cell(h.point.z)) & 1) != 0;
  return s.direct(h, parity ? odd : even);
}

vec3 mirror::shade(const scene& s, const ray& r, const hit& h, int depth) const {
  const vec3 base = s.direct(h, tint) * (1 - reflectivity);
  if (depth >= s.max_depth) return base;
  const vec3 reflected = normalize(r.direction - h.normal * (2 * dot(r.direction, h.normal)));
  return base + s.trace(ray{h.point + h.normal * 1e-4, reflected}, depth + 1) * tint * reflectivity;
}

std::vector<std::uint8_t> render_tile(const scene& s, int image_width, int image_height, tile t) {
  const camera& c = s.view;
  const vec3 forward = normalize(c.look_at - c.eye);
  const vec3 right = normalize(cross(c.up, forward));
  const vec3 up = cross(forward, right);
  const double half = std::tan(c.fov_degrees * 3.141592653589793 / 360.0);
  const double aspect = static_cast<double>(image_width) / image_height;
  std::vector<std::uint8_t> pixels;
  pixels.reserve(static_cast<std::size_t>(t.width) * t.height * 3);
  static constexpr double offsets[2] = {0.25, 0.75};
  for (int y = t.y0; y < t.y0 + t.height; ++y) {
    for (int x = t.x0; x < t.x0 + t.width; ++x) {
      vec3 color;
      for (double oy : offsets) {
        for (double ox : offsets) {
          const double px = (2 * ((x + ox) / image_width) - 1) * half * aspect;
          const double py = (1 - 2 * ((y + oy) / image_height)) * half;
          color = color + s.trace(ray{c.eye, normalize(forward + right * px + up * py)}, 0);
        }
      }
      color = color * 0.25;
      for (double channel : {color.x, color.y, color.z}) {
        const double g = std::pow(std::clamp(channel, 0.0, 1.0), 1 / 2.2);
        pixels.push_back(static_cast<std::uint8_t>(std::lround(g * 255)));
      }
    }
  }
  return pixels;
}

std::vector<tile> tiles_of(int image_width, int image_height, int size) {
  std::vector<tile> out;
  for (int y = 0; y < image_height; y += size)
    for (int x = 0; x < image_width; x += size)
      out.push_back({x, y, std::min(size, image_width - x), std::min(size, image_height - y)});
  return out;
}

}  // namespace raytracer
