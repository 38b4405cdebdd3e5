// `cppless obj counter|barrier|map|queue|rendezvous NAME ...` over cppless::shared.
#include "objects.hpp"

#include <cppless/shared.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

namespace cppless::tools {
namespace {

namespace sh = cppless::shared;

struct object_args {
  std::string ns;
  std::string name;
  std::string action;
  std::vector<std::string> operands;
  int parties = 0;
  long long timeout_ms = 60'000;
  std::string value;
};

sh::store open_store(const object_args& a) {
  std::string ns = a.ns;
  if (ns.empty()) {
    const char* env = std::getenv("CPPLESS_REDIS_NAMESPACE");
    ns = env != nullptr && *env != '\0' ? env : "cppless-cli";
  }
  const char* url = std::getenv("CPPLESS_REDIS");
  return sh::store::connect(url != nullptr && *url != '\0' ? url : "redis://127.0.0.1:6379", ns);
}

[[noreturn]] void usage(const std::string& what) {
  std::cerr << "cppless obj: " << what << "\n";
  std::exit(2);
}

const std::string& operand(const object_args& a, std::size_t i, const char* what) {
  if (i >= a.operands.size()) usage(a.action + " needs " + what);
  return a.operands[i];
}

long long number(const std::string& text) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty()) usage("'" + text + "' is not an integer");
  return v;
}

int run(const std::string& kind, const object_args& a) {
  const auto timeout = std::chrono::milliseconds(a.timeout_ms);
  auto store = open_store(a);
  if (kind == "counter") {
    auto c = store.counter(a.name);
    if (a.action == "add") {
      std::cout << c.add(a.operands.empty() ? 1 : number(a.operands[0])) << "\n";
    } else if (a.action == "get") {
      std::cout << c.get() << "\n";
    } else if (a.action == "reset") {
      std::cout << c.reset(a.operands.empty() ? 0 : number(a.operands[0])) << "\n";
    } else {
      usage("counter actions: add [N], get, reset [N]");
    }
  } else if (kind == "barrier") {
    if (a.action != "await") usage("barrier actions: await --parties N");
    if (a.parties < 1) usage("barrier await needs --parties N (N >= 1)");
    std::cout << store.barrier(a.name, a.parties).arrive_and_wait(timeout) << "\n";
  } else if (kind == "map") {
    auto m = store.map<std::string, std::string>(a.name);
    if (a.action == "put") {
      m.put(operand(a, 0, "a key"), operand(a, 1, "a value"));
    } else if (a.action == "get") {
      auto v = m.get(operand(a, 0, "a key"));
      if (!v) {
        std::cerr << "cppless obj: map '" << a.name << "' has no key '" << a.operands[0] << "'\n";
        return 1;
      }
      std::cout << *v << "\n";
    } else if (a.action == "erase") {
      return m.erase(operand(a, 0, "a key")) ? 0 : 1;
    } else if (a.action == "list") {
      for (auto& [k, v] : m.snapshot()) std::cout << k << "\t" << v << "\n";
    } else {
      usage("map actions: put K V, get K, erase K, list");
    }
  } else if (kind == "queue") {
    auto q = store.queue<std::string>(a.name);
    if (a.action == "push") {
      if (a.operands.empty()) {
        // Every line of standard input, in order: `producer | cppless obj queue q push`.
        for (std::string line; std::getline(std::cin, line);) q.push(line);
      } else {
        for (const auto& v : a.operands) q.push(v);
      }
    } else if (a.action == "pop") {
      std::cout << q.pop(timeout) << "\n";
    } else if (a.action == "drain") {
      // Lines until the end marker (the item "\x04" that `end` pushes): `cppless obj queue q drain | consumer`.
      for (;;) {
        std::string line = q.pop(timeout);
        if (line == "\x04") break;
        std::cout << line << "\n";
      }
    } else if (a.action == "end") {
      q.push("\x04");
    } else {
      usage("queue actions: push [V...] (no V: lines of stdin), pop, drain, end");
    }
  } else if (kind == "rendezvous") {
    // Each of N parties contributes a value; all wait for each other, then each prints every value
    // (in arrival order): how a script learns what the others have (hosts, ports, file names).
    if (a.action != "join") usage("rendezvous actions: join --parties N --value V");
    if (a.parties < 1) usage("rendezvous join needs --parties N (N >= 1)");
    auto values = store.list<std::string>(a.name + ".values");
    values.push_back(a.value);
    store.barrier(a.name + ".barrier", a.parties).arrive_and_wait(timeout);
    for (const auto& v : values.range(0, a.parties - 1)) std::cout << v << "\n";
  }
  return 0;
}

}  // namespace

void add_object_commands(CLI::App& app) {
  auto* obj = app.add_subcommand("obj", "Shared objects from scripts: counter, barrier, map, queue, rendezvous (CPPLESS_REDIS)");
  obj->require_subcommand(1);
  for (const char* kind : {"counter", "barrier", "map", "queue", "rendezvous"}) {
    auto args = std::make_shared<object_args>();
    auto* sub = obj->add_subcommand(kind, std::string("A shared ") + kind);
    sub->add_option("name", args->name, "The object's name")->required();
    sub->add_option("action", args->action, "What to do (see the kind's usage)")->required();
    sub->add_option("operands", args->operands, "Operands of the action");
    sub->add_option("--namespace", args->ns, "Namespace (default: CPPLESS_REDIS_NAMESPACE or cppless-cli)");
    sub->add_option("--parties", args->parties, "Parties of a barrier or rendezvous");
    sub->add_option("--timeout-ms", args->timeout_ms, "How long a blocking action waits (default 60000)");
    sub->add_option("--value", args->value, "This party's value (rendezvous)");
    const std::string k = kind;
    sub->callback([k, args] {
      try {
        if (int code = run(k, *args)) std::exit(code);
      } catch (const std::exception& e) {
        std::cerr << "cppless: " << e.what() << "\n";
        std::exit(1);
      }
    });
  }
}

}  // namespace cppless::tools
