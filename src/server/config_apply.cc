// Directives read and applied (config.h): a config file's text and the
// command line at start, CONFIG GET's patterns and CONFIG SET's all-or-
// nothing changes, over the table in config.cc.
#include <glob.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/glob.h"
#include "protocol/parser.h"
#include "server/config.h"
#include "server/config_options.h"

namespace peregrine {

using namespace config_options;

bool ParseConfigText(std::string_view text, std::vector<Directive>* out, std::string* err) {
  size_t line_no = 0;
  while (!text.empty()) {
    line_no++;
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
    size_t first = 0;
    while (first < line.size() && std::isspace(static_cast<unsigned char>(line[first]))) first++;
    line = line.substr(first);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> words;
    if (!SplitArgs(line, &words)) {
      *err = "Unbalanced quotes in configuration line " + std::to_string(line_no) + ": '" +
             std::string(line) + "'";
      return false;
    }
    if (words.empty()) continue;
    Directive d;
    d.name = words[0];
    d.args.assign(words.begin() + 1, words.end());
    d.origin = "line " + std::to_string(line_no);
    d.text = std::string(line);
    out->push_back(std::move(d));
  }
  return true;
}

bool ReadConfigFile(const std::string& path, std::string* text, std::string* err) {
  std::ifstream in(path);
  if (!in) {
    *err = "Fatal error, can't open config file '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::stringstream s;
  s << in.rdbuf();
  *text = s.str();
  return true;
}

bool ExpandIncludes(std::vector<Directive>* ds, std::string* err, bool* unreadable, int depth) {
  // (Redis 7's include: a path or a glob pattern, its files in name order,
  // each read where the line stands, so later lines override them.)
  constexpr int kMaxDepth = 16;
  std::vector<Directive> out;
  for (Directive& d : *ds) {
    if (Lower(d.name) != "include") {
      out.push_back(std::move(d));
      continue;
    }
    if (d.args.size() != 1) {
      *err = "Bad directive or wrong number of arguments (" + d.origin + ": '" + d.text + "')";
      return false;
    }
    if (depth >= kMaxDepth) {
      *err = "Too many nested includes (" + d.origin + ": '" + d.text + "')";
      return false;
    }
    const std::string& pattern = d.args[0];
    std::vector<std::string> files;
    glob_t g{};
    const int rc = ::glob(pattern.c_str(), GLOB_ERR, nullptr, &g);
    if (rc == 0) {
      for (size_t i = 0; i < g.gl_pathc; i++) files.emplace_back(g.gl_pathv[i]);
    } else if (pattern.find_first_of("*?[") == std::string::npos) {
      files.push_back(pattern);  // (not there: the open below says so)
    }
    ::globfree(&g);
    for (const std::string& file : files) {
      std::string text;
      if (!ReadConfigFile(file, &text, err)) {
        *unreadable = true;
        return false;
      }
      std::vector<Directive> inner;
      if (!ParseConfigText(text, &inner, err)) {
        *err = file + ": " + *err;
        return false;
      }
      for (Directive& i : inner) i.origin = file + " " + i.origin;
      if (!ExpandIncludes(&inner, err, unreadable, depth + 1)) return false;
      for (Directive& i : inner) out.push_back(std::move(i));
    }
  }
  *ds = std::move(out);
  return true;
}

void ParseConfigArgs(std::span<char* const> args, std::vector<Directive>* out) {
  for (size_t i = 0; i < args.size(); i++) {
    std::string_view a = args[i];
    if (a.size() > 2 && a.substr(0, 2) == "--") {
      Directive d;
      // "--port 6380" as one argument carries its value, as redis-server allows.
      std::vector<std::string> words;
      if (SplitArgs(a.substr(2), &words) && words.size() > 1) {
        d.name = words[0];
        d.args.assign(words.begin() + 1, words.end());
      } else {
        d.name = std::string(a.substr(2));
      }
      d.origin = "argument " + std::string(a);
      d.text = std::string(a.substr(2));
      out->push_back(std::move(d));
    } else if (!out->empty()) {
      out->back().args.emplace_back(a);
      out->back().text += " \"" + std::string(a) + "\"";
    } else {
      Directive d;  // a value with no directive before it: reported as bad
      d.name = std::string(a);
      d.origin = "argument " + std::string(a);
      d.text = std::string(a);
      out->push_back(std::move(d));
    }
  }
}

bool ApplyDirectives(Config* config, const std::vector<Directive>& directives, std::string* err,
                     const Directive** failed) {
  for (const Directive& d : directives) {
    if (Lower(d.name) == "user") {
      // Checked when the server loads its users (Server::Start).
      if (d.args.empty()) {
        *err = "Bad directive or wrong number of arguments";
        *failed = &d;
        return false;
      }
      config->users.push_back(d.args);
      continue;
    }
    const Option* o = FindOption(d.name);
    int n = static_cast<int>(d.args.size());
    // A bare "--save" (as the last argument or before another option) means
    // save "", as redis-server reads it.
    static const std::string kEmpty;
    std::span<const std::string> args = d.args;
    if (o != nullptr && o->name == "save" && n == 0 && d.origin.rfind("argument", 0) == 0) {
      args = std::span<const std::string>(&kEmpty, 1);
      n = 1;
    }
    if (o == nullptr || n < o->min_args || n > o->max_args) {
      *err = "Bad directive or wrong number of arguments";
      *failed = &d;
      return false;
    }
    std::string why = o->set(*config, args);
    if (!why.empty()) {
      *err = why;
      *failed = &d;
      return false;
    }
  }
  return true;
}

std::vector<std::pair<std::string, std::string>> ConfigGet(const Config& config,
                                                           std::span<const std::string_view> patterns) {
  // Redis's hidden directives (test hooks) come only when named exactly.
  static const std::set<std::string_view> kHidden = {"rdb-key-save-delay", "key-load-delay",
                                                     "loading-process-events-interval-bytes",
                                                     "client-default-resp", "cluster-ping-interval"};
  std::vector<std::pair<std::string, std::string>> out;
  for (const Option& o : Options()) {
    for (std::string_view p : patterns) {
      if (kHidden.count(o.name) && p.find_first_of("*?[\\") != std::string_view::npos) continue;
      if (GlobMatch(p, o.name, /*nocase=*/true)) {
        out.emplace_back(std::string(o.name), o.get(config));
        break;
      }
    }
  }
  return out;
}

bool ConfigSet(Config* config, std::span<const std::string_view> name_values, std::string* err,
               bool protected_allowed) {
  if (name_values.empty() || name_values.size() % 2 != 0) {
    *err = "ERR syntax error";
    return false;
  }
  // Redis's order: every name is looked up first (an unknown one wins over
  // any other error), then immutability and duplicates (named as sent), then
  // the values, on a copy, so that a failure changes nothing (named by the
  // directive's own name).
  const size_t count = name_values.size() / 2;
  std::vector<const Option*> options(count, nullptr);
  for (size_t i = 0; i < count; i++) {
    options[i] = FindOption(name_values[2 * i]);
    if (options[i] == nullptr) {
      *err = "ERR Unknown option or number of arguments for CONFIG SET - '" +
             std::string(name_values[2 * i]) + "'";
      return false;
    }
  }
  auto fail = [&](std::string_view name, const std::string& why) {
    *err = "ERR CONFIG SET failed (possibly related to argument '" + std::string(name) + "') - " + why;
    return false;
  };
  for (size_t i = 0; i < count; i++) {
    if (options[i]->mutability == kImmutable) return fail(name_values[2 * i], "can't set immutable config");
    if (options[i]->mutability == kProtected && !protected_allowed)
      return fail(name_values[2 * i], "can't set protected config");
    for (size_t j = 0; j < i; j++)
      if (options[j] == options[i]) return fail(name_values[2 * i], "duplicate parameter");
  }
  Config trial = *config;
  trial.save_reset_pending = true;  // a CONFIG SET save replaces the schedule
  for (size_t i = 0; i < count; i++) {
    std::string value(name_values[2 * i + 1]);
    const bool fixed = options[i]->mutability == kNotYet || options[i]->mutability == kFixed;
    // What CONFIG GET prints for a fixed directive is taken back as is, even
    // a value the parser would refuse (threads reads 0 before the server
    // resolves it).
    if (fixed && value == options[i]->get(*config)) continue;
    std::string why = options[i]->set(trial, std::span<const std::string>(&value, 1));
    if (!why.empty()) return fail(options[i]->name, why);
    // (Its own value again changes nothing: allowed, as Redis's CONFIG SET of it is.)
    if (fixed && options[i]->get(trial) != options[i]->get(*config))
      return fail(options[i]->name, "can't set immutable config");
  }
  *config = std::move(trial);
  return true;
}

}  // namespace peregrine
