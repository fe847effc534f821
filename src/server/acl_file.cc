// Users from the configuration (`user` directives, requirepass) and the ACL
// file (aclfile: ACL LOAD, ACL SAVE), in Redis 7.2's formats and with its
// error texts. The file is read whole and applied only if every line is
// valid; it is written to a temporary file renamed over it.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "server/acl.h"
#include "server/log.h"
#include "server/persistence.h"
#include "server/server.h"

namespace peregrine {
namespace {

std::string Trim(std::string_view s, std::string_view chars) {
  const size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return "";
  const size_t e = s.find_last_not_of(chars);
  return std::string(s.substr(b, e - b + 1));
}

}  // namespace

std::string LoadAclFile(Acl& acl, const std::string& path, std::vector<std::shared_ptr<AclUser>>* gone) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "Error loading ACLs, opening file '" + path + "': " + std::strerror(errno);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::map<std::string, std::shared_ptr<AclUser>, std::less<>> users;
  std::string errors;
  size_t start = 0;
  int linenum = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = Trim(std::string_view(text).substr(start, nl - start), " \t\r\n");
    start = nl + 1;
    linenum++;
    if (line.empty()) continue;
    // Split on single spaces (Redis's sdssplitlen: no quoting in this file).
    std::vector<std::string> argv;
    size_t p = 0;
    while (p <= line.size()) {
      size_t sp = line.find(' ', p);
      if (sp == std::string::npos) sp = line.size();
      argv.push_back(line.substr(p, sp - p));
      p = sp + 1;
    }
    const std::string where = path + ":" + std::to_string(linenum);
    if (argv[0] != "user" || argv.size() < 2) {
      errors += where + " should start with user keyword followed by the username. ";
      continue;
    }
    if (AclHasSpaces(argv[1])) {
      errors += "'" + where + ": username '" + argv[1] + "' contains invalid characters. ";
      continue;
    }
    if (users.contains(argv[1])) {
      errors += "WARNING: Duplicate user '" + argv[1] + "' found on line " + std::to_string(linenum) + ". ";
      continue;
    }
    for (size_t j = 2; j < argv.size(); j++) argv[j] = Trim(argv[j], "\t\r\n");
    const std::vector<std::string_view> rules(argv.begin() + 2, argv.end());
    // Every unknown command is reported, other errors only the line's first
    // (Redis's ACLLoadFromFile).
    auto u = std::make_shared<AclUser>(acl.NewUser(argv[1]));
    bool syntax_reported = false;
    const std::string err = acl.ApplyRules(*u, rules, [&](std::string_view rule, std::string_view why, bool unknown) {
      if (unknown) {
        errors += where + ": Error in applying operation '" + std::string(rule) + "': " + std::string(why) + ". ";
      } else if (!syntax_reported) {
        errors += where + ": " + std::string(why) + ". ";
        syntax_reported = true;
      }
    });
    if (err.starts_with("Unmatched parenthesis")) errors += where + ": Unmatched parenthesis in selector definition.";
    if (!err.empty()) continue;
    users.emplace(argv[1], std::move(u));
  }
  if (!errors.empty())
    return errors + "WARNING: ACL errors detected, no change to the previously active ACL rules was performed";
  *gone = acl.ReplaceAll(std::move(users));
  return "";
}

bool SaveAclFile(const Acl& acl, const std::string& path) {
  std::string text;
  for (const auto& [name, u] : acl.users()) text += "user " + name + " " + acl.Describe(*u) + "\n";
  const std::string temp = path + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(UnixTimeMs());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    LOG_WARNING("Opening temp ACL file for ACL SAVE: %s", std::strerror(errno));
    return false;
  }
  std::string why;
  const bool ok = WriteAll(fd, text);
  if (!ok) LOG_WARNING("Writing ACL file for ACL SAVE: %s", std::strerror(errno));
  if (!CommitRdbFile(fd, ok, temp, path, &why)) {
    if (!why.empty()) LOG_WARNING("ACL SAVE: %s", why.c_str());
    return false;
  }
  return true;
}

bool Server::LoadUsers(std::string* err) {
  if (!config_.aclfile.empty() && !config_.users.empty()) {
    *err =
        "Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. "
        "This setup is very likely to lead to configuration errors and security holes, please define either an "
        "ACL file or declare users directly in your redis.conf, but not both.";
    return false;
  }
  std::set<std::string, std::less<>> declared;
  for (const std::vector<std::string>& d : config_.users) {
    if (AclHasSpaces(d[0])) {
      *err = "Spaces not allowed in ACL usernames";
      return false;
    }
    if (!declared.insert(d[0]).second) {
      *err = "Error in user declaration '" + d[0] +
             "': Duplicate user found. A user can only be defined once in config files";
      return false;
    }
    std::vector<std::string_view> rules(d.begin() + 1, d.end());
    // From a fresh user ("default" too: reset first, as Redis).
    std::vector<std::string_view> with_reset = {"reset"};
    with_reset.insert(with_reset.end(), rules.begin(), rules.end());
    std::string why = acl_->SetUser(d[0], with_reset);
    if (!why.empty()) {
      *err = "Error in user declaration '" + d[0] + "': " + why;
      return false;
    }
    if (!acl_->Find(d[0])->enabled)
      LOG_NOTICE("The user '%s' is disabled (there is no 'on' modifier in the user description). Make sure this "
                 "is not a configuration error.",
                 d[0].c_str());
  }
  if (!config_.aclfile.empty()) {
    std::vector<std::shared_ptr<AclUser>> gone;
    std::string why = LoadAclFile(*acl_, config_.aclfile, &gone);
    if (!why.empty()) {
      *err = "Aborting Redis startup because of ACL errors: " + why;
      return false;
    }
  }
  return true;
}

}  // namespace peregrine
