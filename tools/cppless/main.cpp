// cppless — command-line tool of the cppless framework.
//
//   cppless manifest <executable> [--compact]   print the offloadable functions as JSON
//   cppless deploy <executable>                  create/update its AWS Lambda functions
//   cppless functions list|remove                the deployed cppless functions
//   cppless resource-manager | executor-manager  the servers of the lease backend
//   cppless report <trace.jsonl> [--html|--plot]  calls, times and cost from an invocation trace
#include "deploy.hpp"
#include "lease_commands.hpp"
#include "manifest.hpp"
#include "report.hpp"
#include "objects.hpp"
#include "shell.hpp"

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"cppless: single-source serverless C++ (manifest of offloaded functions)"};
  app.require_subcommand(1);

  std::string executable;
  bool compact = false;
  auto* manifest = app.add_subcommand("manifest", "Print the entry points of a cppless executable as JSON");
  manifest->add_option("executable", executable, "A program linked with cppless")->required();
  manifest->add_flag("--compact", compact, "One line instead of indented JSON");

  cppless::tools::add_aws_commands(app);
  cppless::tools::add_lease_commands(app);
  cppless::tools::add_report_command(app);
  cppless::tools::add_object_commands(app);  // cppless obj ... (shared objects)
  cppless::tools::add_shell_command(app);    // cppless sh ... (serverless shell)

  CLI11_PARSE(app, argc, argv);
  try {
    if (*manifest) {
      auto json = cppless::tools::read_manifest(executable);
      std::cout << (compact ? json.dump() : json.dump(2)) << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "cppless: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
