// CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO (server/tracking.h,
// docs/tracking.md), as Redis 7.2's, with its error texts; and what a flush
// tells tracking clients.
#include <algorithm>
#include <string>
#include <vector>

#include "commands/common.h"
#include "commands/tracking_commands.h"
#include "server/client.h"
#include "server/shard.h"
#include "server/tracking.h"

namespace peregrine {

namespace {

// Whether a and b share their first min(len) bytes: they would tell of the
// same keys (Redis's stringCheckPrefix).
bool Overlap(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  return a.substr(0, n) == b.substr(0, n);
}

// Redis's checkPrefixCollisionsOrReply; false after replying the error.
bool CheckPrefixes(CommandContext& ctx, const std::vector<std::string_view>& prefixes) {
  for (size_t i = 0; i < prefixes.size(); i++) {
    for (const std::string& mine : ctx.client.tracking_prefixes) {
      if (Overlap(mine, prefixes[i])) {
        ctx.reply.Error("ERR Prefix '" + AsCString(prefixes[i]) + "' overlaps with an existing prefix '" +
                        AsCString(mine) + "'. Prefixes for a single client must not overlap.");
        return false;
      }
    }
    for (size_t j = i + 1; j < prefixes.size(); j++) {
      if (Overlap(prefixes[i], prefixes[j])) {
        ctx.reply.Error("ERR Prefix '" + AsCString(prefixes[i]) + "' overlaps with another provided prefix '" +
                        AsCString(prefixes[j]) + "'. Prefixes for a single client must not overlap.");
        return false;
      }
    }
  }
  return true;
}

}  // namespace

// CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN]
// [OPTOUT] [NOLOOP]. Runs holding every shard: the client redirected to is
// looked for among every worker's, and BCAST makes every shard report its
// expired keys.
void ClientTrackingCommand(CommandContext& ctx) {
  Client& c = ctx.client;
  const auto& a = ctx.args;
  int64_t redir = 0;
  uint32_t redir_home = 0;
  uint8_t options = 0;
  std::vector<std::string_view> prefixes;
  for (size_t j = 3; j < a.size(); j++) {
    const bool more = j + 1 < a.size();
    if (EqualsIgnoreCase(a[j], "redirect") && more) {
      j++;
      if (redir != 0) {
        ctx.reply.Error("ERR A client can only redirect to a single other client");
        return;
      }
      if (!ParseIntArg(ctx, a[j], &redir)) return;
      // (It must exist now; it may go later: then the client is told.)
      const std::vector<Client*> all = ctx.server.AllClients();
      auto it = std::find_if(all.begin(), all.end(), [&](const Client* x) {
        return !x->closed && static_cast<int64_t>(x->id) == redir;
      });
      if (it == all.end()) {
        ctx.reply.Error("ERR The client ID you want redirect to does not exist");
        return;
      }
      redir_home = (*it)->home;
    } else if (EqualsIgnoreCase(a[j], "bcast")) {
      options |= tracking::kBcast;
    } else if (EqualsIgnoreCase(a[j], "optin")) {
      options |= tracking::kOptin;
    } else if (EqualsIgnoreCase(a[j], "optout")) {
      options |= tracking::kOptout;
    } else if (EqualsIgnoreCase(a[j], "noloop")) {
      options |= tracking::kNoloop;
    } else if (EqualsIgnoreCase(a[j], "prefix") && more) {
      prefixes.push_back(a[++j]);
    } else {
      ctx.reply.Error(kErrSyntax);
      return;
    }
  }
  TrackingRegistry& registry = ctx.server.tracking();
  if (EqualsIgnoreCase(a[2], "off")) {
    DisableTracking(registry, c);
    ctx.reply.Ok();
    return;
  }
  if (!EqualsIgnoreCase(a[2], "on")) {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  if (!(options & tracking::kBcast) && !prefixes.empty()) {
    ctx.reply.Error("ERR PREFIX option requires BCAST mode to be enabled");
    return;
  }
  if ((c.tracking & tracking::kOn) && ((c.tracking & tracking::kBcast) != 0) != ((options & tracking::kBcast) != 0)) {
    ctx.reply.Error(
        "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling "
        "it with a different mode.");
    return;
  }
  if ((options & tracking::kBcast) && (options & (tracking::kOptin | tracking::kOptout))) {
    ctx.reply.Error("ERR OPTIN and OPTOUT are not compatible with BCAST");
    return;
  }
  if ((options & tracking::kOptin) && (options & tracking::kOptout)) {
    ctx.reply.Error("ERR You can't specify both OPTIN mode and OPTOUT mode");
    return;
  }
  if (((options & tracking::kOptin) && (c.tracking & tracking::kOptout)) ||
      ((options & tracking::kOptout) && (c.tracking & tracking::kOptin))) {
    ctx.reply.Error(
        "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling "
        "it with a different mode.");
    return;
  }
  if ((options & tracking::kBcast) && !CheckPrefixes(ctx, prefixes)) return;

  // Redis's enableTracking: the mode's flags are set anew (CLIENT CACHING's
  // stays), BCAST prefixes are added to those the client has.
  if (!(c.tracking & tracking::kOn)) registry.clients().fetch_add(1, std::memory_order_relaxed);
  c.tracking |= tracking::kOn;
  c.tracking &= static_cast<uint8_t>(~(tracking::kBrokenRedir | tracking::kBcast | tracking::kOptin |
                                       tracking::kOptout | tracking::kNoloop));
  c.tracking_redirect = static_cast<uint64_t>(redir);
  c.tracking_redirect_home = redir_home;
  if (options & tracking::kBcast) {
    c.tracking |= tracking::kBcast;
    std::vector<std::string> added;
    if (prefixes.empty()) prefixes.push_back("");
    for (std::string_view p : prefixes) {
      if (std::find(c.tracking_prefixes.begin(), c.tracking_prefixes.end(), p) != c.tracking_prefixes.end()) continue;
      c.tracking_prefixes.emplace_back(p);
      added.emplace_back(p);
    }
    registry.Subscribe(c.id, c.home, added);
    // Every shard's expired keys reach its table from now on.
    for (size_t s = 0; s < ctx.server.num_shards(); s++) ctx.server.shard(s).SetTrackRemovals(true);
  }
  c.tracking |= options & (tracking::kOptin | tracking::kOptout | tracking::kNoloop);
  c.track_reads = false;  // (set for each command from the flags)
  PublishRedirect(registry, c);
  ctx.reply.Ok();
}

void ClientCachingCommand(CommandContext& ctx) {
  Client& c = ctx.client;
  if (!(c.tracking & tracking::kOn)) {
    ctx.reply.Error(
        "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode "
        "enabled");
    return;
  }
  if (EqualsIgnoreCase(ctx.args[2], "yes")) {
    if (!(c.tracking & tracking::kOptin)) {
      ctx.reply.Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
      return;
    }
  } else if (EqualsIgnoreCase(ctx.args[2], "no")) {
    if (!(c.tracking & tracking::kOptout)) {
      ctx.reply.Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
      return;
    }
  } else {
    ctx.reply.Error(kErrSyntax);
    return;
  }
  c.tracking |= tracking::kCaching;  // for the next command, or the next transaction
  ctx.reply.Ok();
}

void ClientGetredirCommand(CommandContext& ctx) {
  const Client& c = ctx.client;
  ctx.reply.Integer((c.tracking & tracking::kOn) ? static_cast<int64_t>(c.tracking_redirect) : -1);
}

void ClientTrackinginfoCommand(CommandContext& ctx) {
  const Client& c = ctx.client;
  std::vector<std::string_view> flags;
  flags.push_back((c.tracking & tracking::kOn) ? "on" : "off");
  if (c.tracking & tracking::kBcast) flags.push_back("bcast");
  if (c.tracking & tracking::kOptin) {
    flags.push_back("optin");
    if (c.tracking & tracking::kCaching) flags.push_back("caching-yes");
  }
  if (c.tracking & tracking::kOptout) {
    flags.push_back("optout");
    if (c.tracking & tracking::kCaching) flags.push_back("caching-no");
  }
  if (c.tracking & tracking::kNoloop) flags.push_back("noloop");
  if (c.tracking & tracking::kBrokenRedir) flags.push_back("broken_redirect");
  ctx.reply.MapHeader(3);
  ctx.reply.Bulk("flags");
  ctx.reply.SetHeader(flags.size());
  for (std::string_view f : flags) ctx.reply.Bulk(f);
  ctx.reply.Bulk("redirect");
  ctx.reply.Integer((c.tracking & tracking::kOn) ? static_cast<int64_t>(c.tracking_redirect) : -1);
  ctx.reply.Bulk("prefixes");
  std::vector<std::string> prefixes = c.tracking_prefixes;
  std::sort(prefixes.begin(), prefixes.end());  // (Redis's radix tree's order)
  ctx.reply.ArrayHeader(prefixes.size());
  for (const std::string& p : prefixes) ctx.reply.Bulk(p);
}
}  // namespace peregrine
