// `cppless report`: reads an invocation trace, summarizes it per function with the Lambda price
// model (and rFaaS' lease billing), and draws a timeline (HTML with inline SVG; PNG through
// tools/cppless/report_plot.py and matplotlib).
#include "report.hpp"

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace cppless::tools {

using json = nlohmann::json;

namespace {

constexpr int supported_version = 1;  // cppless::trace::format_version

struct line_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::int64_t integer(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) throw line_error(std::string("field '") + key + "' is missing or not an integer");
  return it->get<std::int64_t>();
}
std::string text(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) throw line_error(std::string("field '") + key + "' is missing or not a string");
  return it->get<std::string>();
}
bool boolean(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_boolean()) throw line_error(std::string("field '") + key + "' is missing or not true/false");
  return it->get<bool>();
}

traced_call call_of(const json& j) {
  traced_call c;
  c.function = text(j, "function");
  c.function_id = text(j, "function_id");
  c.backend = text(j, "backend");
  c.invocation = text(j, "invocation");
  c.arch = text(j, "arch");
  c.pid = static_cast<long>(integer(j, "pid"));
  c.worker = static_cast<long>(integer(j, "worker"));
  const std::int64_t memory = integer(j, "memory_mb");
  if (memory < 0 || memory > 1 << 20) throw line_error("field 'memory_mb' is out of range");
  c.memory_mb = static_cast<unsigned>(memory);
  c.cold = boolean(j, "cold");
  c.ok = boolean(j, "ok");
  c.submitted_ns = integer(j, "submitted_unix_ns");
  c.started_ns = integer(j, "started_unix_ns");
  c.executed_ns = integer(j, "executed_unix_ns");
  c.queued_ns = integer(j, "queued_ns");
  c.execution_ns = integer(j, "execution_ns");
  c.round_trip_ns = integer(j, "round_trip_ns");
  c.request_bytes = integer(j, "request_bytes");
  c.response_bytes = integer(j, "response_bytes");
  if (c.execution_ns < 0 || c.round_trip_ns < 0 || c.queued_ns < 0) throw line_error("a duration is negative");
  if (j.contains("billed_ns")) c.billed_ns = integer(j, "billed_ns");
  return c;
}

traced_lease lease_of(const json& j) {
  traced_lease l;
  l.lease = text(j, "lease");
  const std::int64_t memory = integer(j, "memory_mb");
  if (memory < 0 || memory > 1 << 20) throw line_error("field 'memory_mb' is out of range");
  l.memory_mb = static_cast<unsigned>(memory);
  l.allocated_ns = integer(j, "allocated_ns");
  l.hot_poll_ns = integer(j, "hot_poll_ns");
  if (l.allocated_ns < 0 || l.hot_poll_ns < 0) throw line_error("a duration is negative");
  return l;
}

double percentile_ms(std::vector<std::int64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))) - (q > 0 ? 1 : 0);
  return static_cast<double>(v[std::min(k, v.size() - 1)]) / 1e6;
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string usd(double v) { return v >= 0.01 ? fmt("$%.4f", v) : fmt("$%.8f", v); }

// Rows of the timeline: one per (process, worker).
std::vector<std::pair<long, long>> timeline_rows(const std::vector<traced_call>& calls) {
  std::set<std::pair<long, long>> rows;
  for (const auto& c : calls) rows.insert({c.pid, c.worker});
  return {rows.begin(), rows.end()};
}

const char* const palette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

}  // namespace

trace_contents read_trace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  trace_contents t;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    const bool unterminated = in.eof();  // the file ends inside this line: cut off while being written?
    if (line.empty()) continue;
    try {
      json j;
      try {
        j = json::parse(line);
      } catch (const json::parse_error&) {
        throw line_error(unterminated ? "truncated: the file ends inside this line (not a complete JSON object)"
                                      : "not a JSON object (malformed)");
      }
      if (!j.is_object()) throw line_error("not a JSON object");
      if (!j.contains("v") || !j["v"].is_number_integer()) throw line_error("no format version ('v'): not a cppless trace line");
      const auto v = j["v"].get<std::int64_t>();
      if (v != supported_version)
        throw line_error("trace format version " + std::to_string(v) + "; this cppless reads version " +
                         std::to_string(supported_version));
      const std::string kind = text(j, "kind");
      if (kind == "call") t.calls.push_back(call_of(j));
      else if (kind == "lease") t.leases.push_back(lease_of(j));
      else if (kind != "process") throw line_error("unknown kind '" + kind + "'");
    } catch (const line_error& e) {
      t.problems.push_back("line " + std::to_string(number) + ": " + e.what());
    }
  }
  t.lines = number;
  return t;
}

report summarize(const trace_contents& trace, const prices& p) {
  report r;
  std::map<std::tuple<std::string, std::string, unsigned>, std::vector<const traced_call*>> groups;
  for (const auto& c : trace.calls) groups[{c.function, c.backend, c.memory_mb}].push_back(&c);
  for (auto& [key, calls] : groups) {
    function_summary f;
    f.function = std::get<0>(key);
    f.backend = std::get<1>(key);
    f.memory_mb = std::get<2>(key);
    f.function_id = calls.front()->function_id;
    std::vector<std::int64_t> rt, ex;
    for (const traced_call* c : calls) {
      ++f.calls;
      f.failed += c->ok ? 0 : 1;
      f.cold += c->cold ? 1 : 0;
      rt.push_back(c->round_trip_ns);
      ex.push_back(c->execution_ns);
      // Lambda bills the duration rounded up to the millisecond (billed_ns when the backend had it).
      const std::int64_t billed = c->billed_ns ? *c->billed_ns : (c->execution_ns + 999'999) / 1'000'000 * 1'000'000;
      f.gb_seconds += static_cast<double>(billed) / 1e9 * (c->memory_mb / 1024.0);
    }
    f.round_trip_p50_ms = percentile_ms(rt, 0.5);
    f.round_trip_p99_ms = percentile_ms(rt, 0.99);
    f.execution_p50_ms = percentile_ms(ex, 0.5);
    f.execution_p99_ms = percentile_ms(ex, 0.99);
    f.lambda_x86_usd = f.gb_seconds * p.lambda_x86_gb_s + static_cast<double>(f.calls) * p.lambda_request;
    f.lambda_arm_usd = f.gb_seconds * p.lambda_arm_gb_s + static_cast<double>(f.calls) * p.lambda_request;
    r.total_gb_seconds += f.gb_seconds;
    r.total_lambda_x86_usd += f.lambda_x86_usd;
    r.total_lambda_arm_usd += f.lambda_arm_usd;
    r.functions.push_back(std::move(f));
  }
  if (!trace.leases.empty()) {
    lease_summary l;
    l.leases = trace.leases.size();
    for (const auto& x : trace.leases) {
      l.allocation_gb_s += static_cast<double>(x.allocated_ns) / 1e9 * (x.memory_mb / 1024.0);
      l.hot_poll_s += static_cast<double>(x.hot_poll_ns) / 1e9;
    }
    for (const auto& c : trace.calls)
      if (c.backend == "lease") l.compute_s += static_cast<double>(c.execution_ns) / 1e9;
    l.usd = p.lease_allocation_gb_s * l.allocation_gb_s + p.lease_compute_s * l.compute_s + p.lease_hot_poll_s * l.hot_poll_s;
    r.lease = l;
  }
  return r;
}

std::string render_text(const report& r, const trace_contents& trace, const prices& p) {
  std::ostringstream out;
  out << "cppless report: " << trace.calls.size() << " calls";
  if (!trace.problems.empty()) out << " (" << trace.problems.size() << " of " << trace.lines << " lines skipped, see above)";
  out << "\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-44s %-7s %6s %6s %6s %5s %10s %10s %10s %10s %10s %12s %12s\n", "function", "backend",
                "memory", "calls", "failed", "cold", "rt p50 ms", "rt p99 ms", "ex p50 ms", "ex p99 ms", "GB-s",
                "Lambda x86", "Lambda arm");
  out << line;
  for (const auto& f : r.functions) {
    std::string name = f.function.size() > 44 ? "..." + f.function.substr(f.function.size() - 41) : f.function;
    std::snprintf(line, sizeof line, "%-44s %-7s %6u %6zu %6zu %4.0f%% %10.3f %10.3f %10.3f %10.3f %10.4f %12s %12s\n",
                  name.c_str(), f.backend.c_str(), f.memory_mb, f.calls, f.failed,
                  100.0 * static_cast<double>(f.cold) / static_cast<double>(std::max<std::size_t>(f.calls, 1)),
                  f.round_trip_p50_ms, f.round_trip_p99_ms, f.execution_p50_ms, f.execution_p99_ms, f.gb_seconds,
                  usd(f.lambda_x86_usd).c_str(), usd(f.lambda_arm_usd).c_str());
    out << line;
  }
  out << "\ntotal: " << fmt("%.4f", r.total_gb_seconds) << " GB-s; on AWS Lambda " << usd(r.total_lambda_x86_usd)
      << " (x86_64) or " << usd(r.total_lambda_arm_usd) << " (arm64)\n";
  out << "prices: Lambda x86_64 " << fmt("%.10f", p.lambda_x86_gb_s) << " and arm64 " << fmt("%.10f", p.lambda_arm_gb_s)
      << " USD per GB-s, " << fmt("%.2f", p.lambda_request * 1e6) << " USD per million requests (list prices, us-east-1, "
      << prices::as_of << "); durations billed as traced, else execution rounded up to 1 ms\n";
  if (r.lease) {
    const auto& l = *r.lease;
    out << "leases (rFaaS billing C = Ca*ta + Cc*tc + Ch*th): " << l.leases << " leases, ta " << fmt("%.3f", l.allocation_gb_s)
        << " GB-s, tc " << fmt("%.3f", l.compute_s) << " s, th " << fmt("%.3f", l.hot_poll_s) << " s: " << usd(l.usd) << "\n";
  }
  return out.str();
}

std::string render_json(const report& r, const trace_contents& trace, const prices& p) {
  json j;
  j["prices"] = {{"lambda_x86_gb_s", p.lambda_x86_gb_s}, {"lambda_arm_gb_s", p.lambda_arm_gb_s},
                 {"lambda_request", p.lambda_request}, {"as_of", prices::as_of}};
  j["functions"] = json::array();
  for (const auto& f : r.functions)
    j["functions"].push_back({{"function", f.function}, {"function_id", f.function_id}, {"backend", f.backend},
                              {"memory_mb", f.memory_mb}, {"calls", f.calls}, {"failed", f.failed}, {"cold", f.cold},
                              {"round_trip_p50_ms", f.round_trip_p50_ms}, {"round_trip_p99_ms", f.round_trip_p99_ms},
                              {"execution_p50_ms", f.execution_p50_ms}, {"execution_p99_ms", f.execution_p99_ms},
                              {"gb_seconds", f.gb_seconds}, {"lambda_x86_usd", f.lambda_x86_usd},
                              {"lambda_arm_usd", f.lambda_arm_usd}});
  j["total"] = {{"gb_seconds", r.total_gb_seconds}, {"lambda_x86_usd", r.total_lambda_x86_usd},
                {"lambda_arm_usd", r.total_lambda_arm_usd}};
  if (r.lease)
    j["lease"] = {{"leases", r.lease->leases}, {"allocation_gb_s", r.lease->allocation_gb_s},
                  {"compute_s", r.lease->compute_s}, {"hot_poll_s", r.lease->hot_poll_s}, {"usd", r.lease->usd}};
  // The timeline, for plots: times in ms from the first submission.
  std::int64_t t0 = 0;
  for (const auto& c : trace.calls) t0 = t0 == 0 ? c.submitted_ns : std::min(t0, c.submitted_ns);
  j["timeline"] = json::array();
  for (const auto& c : trace.calls)
    j["timeline"].push_back({{"function", c.function}, {"pid", c.pid}, {"worker", c.worker}, {"cold", c.cold},
                             {"ok", c.ok}, {"submitted_ms", static_cast<double>(c.submitted_ns - t0) / 1e6},
                             {"started_ms", static_cast<double>(c.started_ns - t0) / 1e6},
                             {"executed_ms", static_cast<double>(c.executed_ns - t0) / 1e6}});
  j["problems"] = trace.problems;
  return j.dump(1);
}

std::string render_html(const report& r, const trace_contents& trace, const prices& p) {
  std::ostringstream out;
  out << "<!doctype html><html><head><meta charset=\"utf-8\"><title>cppless report</title><style>"
         "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;"
         "padding:3px 8px;text-align:right}td:first-child{text-align:left}.problem{color:#b00}</style></head><body>"
      << "<h1>cppless report</h1><p>" << trace.calls.size() << " calls.</p>";
  if (!trace.problems.empty()) {
    out << "<p class=\"problem\">" << trace.problems.size() << " of " << trace.lines << " lines could not be read:</p><ul>";
    for (const auto& s : trace.problems) out << "<li class=\"problem\">" << html_escape(s) << "</li>";
    out << "</ul>";
  }
  out << "<h2>Functions</h2><table><tr><th>function</th><th>backend</th><th>memory MB</th><th>calls</th><th>failed</th>"
         "<th>cold</th><th>round trip p50 / p99 ms</th><th>execution p50 / p99 ms</th><th>GB-s</th>"
         "<th>Lambda x86_64</th><th>Lambda arm64</th></tr>";
  for (const auto& f : r.functions)
    out << "<tr><td>" << html_escape(f.function) << "</td><td>" << html_escape(f.backend) << "</td><td>" << f.memory_mb
        << "</td><td>" << f.calls << "</td><td>" << f.failed << "</td><td>"
        << fmt("%.0f%%", 100.0 * static_cast<double>(f.cold) / static_cast<double>(std::max<std::size_t>(f.calls, 1)))
        << "</td><td>" << fmt("%.3f", f.round_trip_p50_ms) << " / " << fmt("%.3f", f.round_trip_p99_ms) << "</td><td>"
        << fmt("%.3f", f.execution_p50_ms) << " / " << fmt("%.3f", f.execution_p99_ms) << "</td><td>"
        << fmt("%.4f", f.gb_seconds) << "</td><td>" << usd(f.lambda_x86_usd) << "</td><td>" << usd(f.lambda_arm_usd)
        << "</td></tr>";
  out << "</table><p>Total " << fmt("%.4f", r.total_gb_seconds) << " GB-s: " << usd(r.total_lambda_x86_usd)
      << " on Lambda x86_64, " << usd(r.total_lambda_arm_usd) << " on arm64 (a price model applied to this trace, "
      << "list prices as of " << prices::as_of << ": x86_64 " << fmt("%.10f", p.lambda_x86_gb_s) << ", arm64 "
      << fmt("%.10f", p.lambda_arm_gb_s) << " USD per GB-s, " << fmt("%.2f", p.lambda_request * 1e6)
      << " USD per million requests).</p>";
  if (r.lease)
    out << "<p>Leases (rFaaS: C = Ca&middot;ta + Cc&middot;tc + Ch&middot;th): ta " << fmt("%.3f", r.lease->allocation_gb_s)
        << " GB-s, tc " << fmt("%.3f", r.lease->compute_s) << " s, th " << fmt("%.3f", r.lease->hot_poll_s) << " s: "
        << usd(r.lease->usd) << ".</p>";

  // Timeline: a row per worker, a bar per call (thin: queued, thick: executing; cold calls outlined).
  const auto rows = timeline_rows(trace.calls);
  if (!trace.calls.empty()) {
    std::int64_t t0 = trace.calls.front().submitted_ns, t1 = t0;
    for (const auto& c : trace.calls) {
      t0 = std::min(t0, c.submitted_ns);
      t1 = std::max({t1, c.executed_ns, c.submitted_ns + c.round_trip_ns});
    }
    const double span = std::max<double>(static_cast<double>(t1 - t0), 1.0);
    const int left = 170, width = 900, row_h = 18, top = 20;
    const int height = top + static_cast<int>(rows.size()) * row_h + 30;
    std::map<std::string, int> colour;
    for (const auto& f : r.functions) colour.emplace(f.function, static_cast<int>(colour.size()) % 10);
    const auto x = [&](std::int64_t t) { return left + static_cast<double>(t - t0) / span * width; };
    out << "<h2>Timeline</h2><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + width + 20 << "\" height=\""
        << height << "\" font-size=\"11\">";
    for (std::size_t i = 0; i < rows.size(); ++i)
      out << "<text x=\"4\" y=\"" << top + static_cast<int>(i) * row_h + 13 << "\">pid " << rows[i].first << " worker "
          << rows[i].second << "</text>";
    for (const auto& c : trace.calls) {
      const auto row = static_cast<int>(std::lower_bound(rows.begin(), rows.end(), std::make_pair(c.pid, c.worker)) - rows.begin());
      const int y = top + row * row_h;
      const char* fill = palette[colour[c.function]];
      out << "<line x1=\"" << x(c.submitted_ns) << "\" x2=\"" << x(c.started_ns) << "\" y1=\"" << y + 9 << "\" y2=\"" << y + 9
          << "\" stroke=\"#999\"/>";
      out << "<rect x=\"" << x(c.started_ns) << "\" y=\"" << y + 2 << "\" width=\""
          << std::max(0.5, x(c.executed_ns) - x(c.started_ns)) << "\" height=\"" << row_h - 4 << "\" fill=\"" << fill
          << "\"" << (c.cold ? " stroke=\"#000\"" : "") << (c.ok ? "" : " fill-opacity=\"0.4\"") << "><title>"
          << html_escape(c.function) << " " << html_escape(c.invocation) << (c.cold ? " cold" : " warm")
          << fmt(" %.3f ms", static_cast<double>(c.execution_ns) / 1e6) << "</title></rect>";
    }
    out << "<text x=\"" << left << "\" y=\"" << height - 8 << "\">0 ms</text><text x=\"" << left + width - 60 << "\" y=\""
        << height - 8 << "\">" << fmt("%.1f ms", span / 1e6) << "</text></svg>";
    out << "<p>A row per worker; bars: execution (outlined: cold), thin lines: queued. Colours:";
    for (const auto& [name, k] : colour)
      out << " <span style=\"color:" << palette[k] << "\">&#9632;</span> " << html_escape(name);
    out << "</p>";
  }
  out << "</body></html>\n";
  return out.str();
}

namespace {

std::string plot_script() {
  if (const char* env = std::getenv("CPPLESS_REPORT_PLOT")) return env;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto installed = exe.parent_path().parent_path() / "share" / "cppless" / "report_plot.py";
    if (std::filesystem::exists(installed)) return installed.string();
  }
  return CPPLESS_REPORT_PLOT_SCRIPT;  // the source tree's copy
}

int run_plot(const std::string& summary_json, const std::string& png) {
  const std::string python = std::getenv("CPPLESS_PYTHON") ? std::getenv("CPPLESS_PYTHON") : "python3";
  const std::string script = plot_script();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execlp(python.c_str(), python.c_str(), script.c_str(), summary_json.c_str(), png.c_str(), static_cast<char*>(nullptr));
    std::fprintf(stderr, "cppless report: cannot run %s: %s\n", python.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) < 0) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

void write_file(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace

void add_report_command(CLI::App& app) {
  struct args {
    std::string trace, plot, html, json_out;
    prices p;
  };
  auto a = std::make_shared<args>();
  auto* cmd = app.add_subcommand("report", "Summarize an invocation trace (CPPLESS_TRACE): per function calls, "
                                           "p50/p99, cold share, GB-seconds, Lambda and lease prices, a timeline");
  cmd->add_option("trace", a->trace, "The trace (JSON lines)")->required();
  cmd->add_option("--plot", a->plot, "Draw the timeline and the cost per function into this PNG (Python 3 + matplotlib)");
  cmd->add_option("--html", a->html, "Write a page with the table and the timeline (no dependencies)");
  cmd->add_option("--json", a->json_out, "Write the summary and the timeline as JSON");
  cmd->add_option("--price-x86", a->p.lambda_x86_gb_s, "USD per GB-second on Lambda x86_64")->capture_default_str();
  cmd->add_option("--price-arm", a->p.lambda_arm_gb_s, "USD per GB-second on Lambda arm64")->capture_default_str();
  cmd->add_option("--price-request", a->p.lambda_request, "USD per Lambda request")->capture_default_str();
  cmd->add_option("--lease-allocation-price", a->p.lease_allocation_gb_s, "rFaaS Ca: USD per allocated GB-second")->capture_default_str();
  cmd->add_option("--lease-compute-price", a->p.lease_compute_s, "rFaaS Cc: USD per second of computation")->capture_default_str();
  cmd->add_option("--lease-hot-price", a->p.lease_hot_poll_s, "rFaaS Ch: USD per second of hot polling")->capture_default_str();
  cmd->callback([a] {
    int code = 0;
    try {
      const trace_contents t = read_trace(a->trace);
      for (const auto& problem : t.problems) std::cerr << "cppless report: " << a->trace << ": " << problem << "\n";
      if (t.calls.empty()) {
        std::cerr << "cppless report: " << a->trace << ": no call could be read (" << t.lines << " lines)\n";
        std::exit(1);
      }
      const report r = summarize(t, a->p);
      std::cout << render_text(r, t, a->p);
      if (!a->html.empty()) write_file(a->html, render_html(r, t, a->p));
      if (!a->json_out.empty()) write_file(a->json_out, render_json(r, t, a->p));
      if (!a->plot.empty()) {
        const std::string summary = a->plot + ".summary.json";
        write_file(summary, render_json(r, t, a->p));
        const int rc = run_plot(summary, a->plot);
        std::filesystem::remove(summary);
        if (rc != 0) {
          std::cerr << "cppless report: drawing " << a->plot << " failed (it needs Python 3 with matplotlib: set "
                    << "CPPLESS_PYTHON to such an interpreter, or use --html)\n";
          code = 1;
        }
      }
      // Lines were skipped: what could be read was reported, but say so in the exit status.
      if (code == 0 && !t.problems.empty()) code = 3;
    } catch (const std::exception& e) {
      std::cerr << "cppless report: " << e.what() << "\n";
      code = 1;
    }
    std::exit(code);
  });
}

}  // namespace cppless::tools
