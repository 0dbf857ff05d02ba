// The command line of hytask's programs (apps, tools, benchmarks): CLI11 with one set of
// conventions, so that every program has --help, takes `--opt value` and `--opt=value`,
// lets a later option override an earlier one, and reports a bad argument the same way:
//
//   <program>: <what is wrong>
//   run '<program> --help' for the options
//
// on stderr, with exit status 2 (hytask_cli::usage_error; main_frame prints it). Values are
// checked by the program's own parsers, which throw usage_error with a message that names
// the option and what it accepts.
#pragma once

#include <CLI/CLI.hpp>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hytask_cli {

// A problem with the command line: the program prints it, its usage line and a pointer to
// --help, and exits with status 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `text` as an integer in lo..hi, or a usage_error "<opt>: '<text>' is not an integer in lo..hi".
inline long parse_integer(const std::string& opt, const std::string& text, long lo, long hi) {
  long v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || v < lo || v > hi)
    throw usage_error(opt + ": '" + text + "' is not an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
  return v;
}

// `text` as a finite number in lo..hi, or a usage_error "<opt>: '<text>' is not a number in lo..hi".
inline double parse_number(const std::string& opt, const std::string& text, double lo, double hi) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || errno != 0 || *end != '\0' || !std::isfinite(v) || v < lo || v > hi) {
    std::ostringstream s;
    s << opt << ": '" << text << "' is not a number in " << lo << ".." << hi;
    throw usage_error(s.str());
  }
  return v;
}

// `text` split at `sep`; "a,,b" gives an empty item, and so does a trailing separator.
inline std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep)) out.push_back(item);
  if (!text.empty() && text.back() == sep) out.emplace_back();
  return out;
}

namespace detail {

// CLI11's help with the usage line first, in hytask's words, and wider option columns.
class formatter : public CLI::Formatter {
 public:
  formatter(std::string program, std::string synopsis)
      : program_(std::move(program)), synopsis_(std::move(synopsis)) {
    column_width(26);
    label("OPTIONS", "options");
  }
  std::string usage_line() const { return "usage: " + program_ + " " + synopsis_ + "\n"; }
  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode mode) const override {
    if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
    std::string out = usage_line();
    if (!app->get_description().empty()) out += "\n" + app->get_description() + "\n";
    out += make_positionals(app);
    out += make_groups(app, mode);
    out += make_subcommands(app, mode);
    if (!app->get_footer().empty()) out += "\n" + app->get_footer() + "\n";
    return out;
  }

 private:
  std::string program_, synopsis_;
};

}  // namespace detail

// One program's command line. Add the options, then parse(); the options' variables hold
// the values given (or their defaults, which the help strings state).
class command_line {
 public:
  // `synopsis` follows the program's name in the usage line, e.g. "[options]   (under mpiexec)";
  // `description` is the help's first paragraph.
  command_line(std::string program, std::string synopsis, std::string description = {})
      : program_(program), app_(std::move(description), program),
        format_(std::make_shared<detail::formatter>(program, std::move(synopsis))) {
    app_.formatter(format_);
    app_.allow_extras();  // reported as "unknown option", not in CLI11's words
    app_.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
    app_.set_help_flag("-h,--help", "print this help and exit");
  }

  // An integer option in lo..hi. `names` as CLI11 takes them ("-N,--n"); messages name the
  // first. `help` says what it sets and its default.
  template <class Int>
  CLI::Option* integer(const std::string& names, Int& value, long lo, long hi, const std::string& help) {
    const std::string opt = first_name(names);
    return custom(names, "INT", [&value, opt, lo, hi](const std::string& s) {
      value = static_cast<Int>(parse_integer(opt, s, lo, hi));
    }, help);
  }
  // A number option in lo..hi.
  CLI::Option* number(const std::string& names, double& value, double lo, double hi, const std::string& help) {
    const std::string opt = first_name(names);
    return custom(names, "X", [&value, opt, lo, hi](const std::string& s) { value = parse_number(opt, s, lo, hi); },
                  help);
  }
  // A text option (a path, a name).
  CLI::Option* text(const std::string& names, std::string& value, const std::string& help,
                    const std::string& type = "TEXT") {
    return custom(names, type, [&value](const std::string& s) { value = s; }, help);
  }
  // A flag: sets `value` to `to` when given.
  CLI::Option* flag(const std::string& names, bool& value, const std::string& help, bool to = true) {
    return app_.add_flag_callback(names, [&value, to] { value = to; }, help);
  }
  // An option whose text `parse` turns into the program's values, throwing usage_error when
  // it cannot; `type` names the value in the help (e.g. "LIST").
  CLI::Option* custom(const std::string& names, const std::string& type,
                      std::function<void(const std::string&)> parse, const std::string& help) {
    return app_.add_option_function<std::string>(names, std::move(parse), help)->type_name(type);
  }
  // Positional arguments, in order (e.g. trace files), into `values`.
  CLI::Option* positionals(const std::string& name, std::vector<std::string>& values, const std::string& help) {
    return app_.add_option(name, values, help)->type_name("");
  }

  // Text after the options in --help: notes, environment, exit status.
  void footer(std::string text) { app_.footer(std::move(text)); }
  // CLI11 itself, for what the helpers above do not cover (subcommands, groups).
  CLI::App& app() { return app_; }

  // Parses argv. True: run the program. False: --help was asked for and printed on stdout
  // (exit with 0); a program under an MPI launcher prints it from one rank (print_help).
  // A problem: usage_error naming it.
  bool parse(int argc, char** argv, bool print_help = true) {
    try {
      app_.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
      if (print_help) std::fputs(app_.help().c_str(), stdout);
      return false;
    } catch (const CLI::CallForAllHelp&) {
      if (print_help) std::fputs(app_.help().c_str(), stdout);
      return false;
    } catch (const CLI::ArgumentMismatch& e) {
      throw usage_error(needs_value(e.what()));
    } catch (const CLI::ParseError& e) {
      throw usage_error(e.what());
    }
    const std::vector<std::string> extra = app_.remaining();
    if (!extra.empty()) {
      const std::string& a = extra.front();
      throw usage_error(a.size() > 1 && a[0] == '-' ? "unknown option '" + a + "'" : "unexpected argument '" + a + "'");
    }
    return true;
  }

 private:
  static std::string first_name(const std::string& names) {
    const auto comma = names.find(',');
    return names.substr(0, comma);
  }
  // CLI11's "--nb: 1 required INT missing" as "--nb needs a value".
  static std::string needs_value(const std::string& what) {
    const auto colon = what.find(": ");
    if (colon != std::string::npos && what[0] == '-' && what.find("missing", colon) != std::string::npos)
      return what.substr(0, colon) + " needs a value";
    return what;
  }

  std::string program_;
  CLI::App app_;
  std::shared_ptr<detail::formatter> format_;
};

// What a program prints on stderr for a usage error, before it exits with status 2.
inline std::string error_text(const std::string& program, const std::string& what) {
  return program + ": " + what + "\nrun '" + program + " --help' for the options\n";
}

// main's frame for the programs without MPI: `body()`'s status; a usage_error printed with
// error_text and status 2; any other exception "<program>: <what>" and status 1.
template <class Body>
int main_frame(const std::string& program, Body body) {
  try {
    return body();
  } catch (const usage_error& e) {
    std::fputs(error_text(program, e.what()).c_str(), stderr);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program.c_str(), e.what());
    return 1;
  }
}

// False in every process an MPI launcher started but its first (Open MPI, MPICH's Hydra,
// PMIx), before MPI is up: --help and usage errors are printed once per job, not per rank.
// True outside a launcher.
inline bool launcher_rank_zero() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MPI_LOCALRANKID"})
    if (const char* s = std::getenv(v)) return std::strcmp(s, "0") == 0;
  return true;
}

// A command line parsed before MPI starts. `parse(print_help)` declares the options, parses
// and checks them (throwing usage_error) and returns false when --help was asked for
// (printed when print_help). Nothing: run the program. Otherwise the status to exit with: 0
// after --help, 2 after a usage error; launcher rank zero alone prints either.
template <class Parse>
std::optional<int> parse_before_mpi(const std::string& program, Parse parse) {
  const bool speak = launcher_rank_zero();
  try {
    if (parse(speak)) return std::nullopt;
    return 0;
  } catch (const usage_error& e) {
    if (speak) std::fputs(error_text(program, e.what()).c_str(), stderr);
    return 2;
  }
}

}  // namespace hytask_cli
