// The scene file reader (format in scene_file.hpp): every error names file, line and column.
#include "scene_file.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

namespace raytracer {

namespace {

struct token {
  std::string text;
  int column = 0;
};

class line_reader {
 public:
  line_reader(std::string name, int line, std::string_view text) : name_(std::move(name)), line_(line) {
    std::size_t i = 0;
    while (i < text.size()) {
      if (text[i] == '#') break;
      if (text[i] == ' ' || text[i] == '\t' || text[i] == '\r') {
        ++i;
        continue;
      }
      const std::size_t start = i;
      while (i < text.size() && text[i] != ' ' && text[i] != '\t' && text[i] != '\r' && text[i] != '#') ++i;
      tokens_.push_back({std::string(text.substr(start, i - start)), static_cast<int>(start) + 1});
    }
    end_column_ = static_cast<int>(text.size()) + 1;
  }

  [[nodiscard]] bool empty() const { return tokens_.empty(); }
  [[nodiscard]] bool done() const { return next_ == tokens_.size(); }

  [[noreturn]] void fail(const std::string& what, int column = 0) const {
    throw scene_error(name_ + ":" + std::to_string(line_) + ":" + std::to_string(column ? column : here()) + ": " + what);
  }

  std::string word(const char* what) {
    if (done()) fail(std::string("expected ") + what + ", found the end of the line");
    return tokens_[next_++].text;
  }

  double number(const char* what) {
    if (done()) fail(std::string("expected ") + what + " (a number), found the end of the line");
    const token& t = tokens_[next_];
    double v = 0;
    const auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc{} || end != t.text.data() + t.text.size() || !std::isfinite(v))
      fail(std::string("expected ") + what + " (a number), found '" + t.text + "'");
    ++next_;
    return v;
  }

  double positive(const char* what) {
    const int at = here();
    const double v = number(what);
    if (!(v > 0)) fail(std::string(what) + " must be positive", at);
    return v;
  }

  long integer(const char* what, long lo, long hi) {
    const int at = here();
    const double v = number(what);
    if (v != std::floor(v) || v < static_cast<double>(lo) || v > static_cast<double>(hi))
      fail(std::string(what) + " must be a whole number from " + std::to_string(lo) + " to " + std::to_string(hi), at);
    return static_cast<long>(v);
  }

  vec3 vector(const char* what) {
    vec3 v;
    v.x = number(what);
    v.y = number(what);
    v.z = number(what);
    return v;
  }

  void finish() const {
    if (!done()) fail("unexpected '" + tokens_[next_].text + "' at the end of the directive");
  }

  [[nodiscard]] int here() const { return done() ? end_column_ : tokens_[next_].column; }

 private:
  std::string name_;
  int line_;
  std::vector<token> tokens_;
  std::size_t next_ = 0;
  int end_column_ = 1;
};

std::shared_ptr<material> make_material(line_reader& in) {
  const int at = in.here();
  const std::string kind = in.word("a material kind (matte, checker, mirror)");
  if (kind == "matte") {
    auto m = std::make_shared<matte>();
    m->color = in.vector("a colour component");
    return m;
  }
  if (kind == "checker") {
    auto m = std::make_shared<checker>();
    m->even = in.vector("a colour component");
    m->odd = in.vector("a colour component");
    m->size = in.positive("the checker size");
    return m;
  }
  if (kind == "mirror") {
    auto m = std::make_shared<mirror>();
    m->tint = in.vector("a colour component");
    m->reflectivity = in.number("the reflectivity");
    if (m->reflectivity < 0 || m->reflectivity > 1) in.fail("the reflectivity must be between 0 and 1");
    return m;
  }
  in.fail("unknown material kind '" + kind + "' (matte, checker or mirror)", at);
}

std::unique_ptr<triangle_mesh> ball_mesh(vec3 center, double radius, int segments) {
  auto mesh = std::make_unique<triangle_mesh>();
  const double pi = 3.141592653589793;
  for (int i = 0; i <= segments; ++i) {
    const double theta = pi * i / segments;
    for (int j = 0; j < segments; ++j) {
      const double phi = 2 * pi * j / segments;
      mesh->vertices.push_back(center + vec3{std::sin(theta) * std::cos(phi), std::cos(theta), std::sin(theta) * std::sin(phi)} * radius);
    }
  }
  const auto at = [segments](int i, int j) { return static_cast<std::uint32_t>(i * segments + (j % segments)); };
  for (int i = 0; i < segments; ++i) {
    for (int j = 0; j < segments; ++j) {
      mesh->faces.push_back({at(i, j), at(i + 1, j), at(i + 1, j + 1)});
      mesh->faces.push_back({at(i, j), at(i + 1, j + 1), at(i, j + 1)});
    }
  }
  mesh->finish();
  return mesh;
}

}  // namespace

scene parse_scene(const std::string& text, const std::string& name) {
  scene s;
  std::map<std::string, std::shared_ptr<material>> materials;
  std::istringstream lines(text);
  std::string raw;
  int number = 0;
  triangle_mesh* open_mesh = nullptr;
  int mesh_line = 0;

  const auto material_named = [&](line_reader& in) -> std::shared_ptr<const material> {
    const int at = in.here();
    const std::string m = in.word("a material name");
    auto it = materials.find(m);
    if (it == materials.end()) in.fail("unknown material '" + m + "' (define it with 'material' first)", at);
    return it->second;
  };

  while (std::getline(lines, raw)) {
    ++number;
    line_reader in(name, number, raw);
    if (in.empty()) continue;
    const int at = in.here();
    const std::string directive = in.word("a directive");
    if (open_mesh != nullptr) {
      if (directive == "v") {
        open_mesh->vertices.push_back(in.vector("a vertex coordinate"));
      } else if (directive == "f") {
        std::array<std::uint32_t, 3> f{};
        for (auto& index : f) {
          const int col = in.here();
          const long i = in.integer("a vertex index", 0, 1L << 30);
          if (static_cast<std::size_t>(i) >= open_mesh->vertices.size())
            in.fail("vertex " + std::to_string(i) + " is not defined yet (" + std::to_string(open_mesh->vertices.size()) +
                        " so far)", col);
          index = static_cast<std::uint32_t>(i);
        }
        open_mesh->faces.push_back(f);
      } else if (directive == "end") {
        if (open_mesh->faces.empty()) in.fail("the mesh opened on line " + std::to_string(mesh_line) + " has no faces");
        open_mesh->finish();
        open_mesh = nullptr;
      } else {
        in.fail("expected 'v', 'f' or 'end' inside the mesh opened on line " + std::to_string(mesh_line) + ", found '" +
                    directive + "'", at);
      }
    } else if (directive == "camera") {
      s.view.eye = in.vector("the eye position");
      s.view.look_at = in.vector("the point looked at");
      s.view.fov_degrees = in.positive("the field of view in degrees");
      if (s.view.fov_degrees >= 180) in.fail("the field of view must be below 180 degrees");
    } else if (directive == "background") {
      s.background = in.vector("a colour component");
    } else if (directive == "ambient") {
      s.ambient = in.vector("a colour component");
    } else if (directive == "depth") {
      s.max_depth = static_cast<int>(in.integer("the reflection depth", 0, 16));
    } else if (directive == "light") {
      light l;
      l.position = in.vector("the light position");
      l.color = in.vector("a colour component");
      s.lights.push_back(l);
    } else if (directive == "material") {
      const int name_at = in.here();
      const std::string m = in.word("a material name");
      if (materials.count(m)) in.fail("material '" + m + "' is defined twice", name_at);
      auto made = make_material(in);
      materials[m] = made;
      s.materials.push_back(std::move(made));
    } else if (directive == "sphere") {
      auto o = std::make_unique<sphere>();
      o->center = in.vector("the centre");
      o->radius = in.positive("the radius");
      o->surface = material_named(in);
      s.objects.push_back(std::move(o));
    } else if (directive == "plane") {
      auto o = std::make_unique<plane>();
      o->point = in.vector("a point of the plane");
      const int n_at = in.here();
      o->normal = in.vector("the normal");
      if (length(o->normal) == 0) in.fail("the normal must not be zero", n_at);
      o->normal = normalize(o->normal);
      o->surface = material_named(in);
      s.objects.push_back(std::move(o));
    } else if (directive == "mesh") {
      auto o = std::make_unique<triangle_mesh>();
      o->surface = material_named(in);
      open_mesh = o.get();
      mesh_line = number;
      s.objects.push_back(std::move(o));
    } else if (directive == "ball_mesh") {
      const vec3 c = in.vector("the centre");
      const double r = in.positive("the radius");
      const int segments = static_cast<int>(in.integer("the number of segments", 3, 2000));
      auto o = ball_mesh(c, r, segments);
      o->surface = material_named(in);
      s.objects.push_back(std::move(o));
    } else {
      in.fail("unknown directive '" + directive + "'", at);
    }
    in.finish();
  }
  if (open_mesh != nullptr)
    throw scene_error(name + ":" + std::to_string(number + 1) + ":1: the file ends inside the mesh opened on line " +
                      std::to_string(mesh_line) + " (missing 'end')");
  if (s.objects.empty()) throw scene_error(name + ": the scene has no objects");
  return s;
}

scene load_scene(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw scene_error(path + ": cannot open the scene file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_scene(text.str(), path);
}

}  // namespace raytracer
