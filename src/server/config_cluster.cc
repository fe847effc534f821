// The cluster-* directives (docs/cluster.md), with Redis 7.2's names,
// ranges, defaults and mutability. The bus takes a copy of them at start and
// after each CONFIG SET (ClusterService::ApplyConfig).
#include <cctype>
#include <climits>

#include "server/config_options.h"

namespace peregrine::config_options {

void AddClusterOptions(std::vector<Option>& o) {
  using S = Config::ClusterSettings;
  o.push_back(BoolOption("cluster-enabled", &S::enabled, kImmutable));
  o.push_back(StringOption("cluster-config-file", &S::config_file, kImmutable));
  o.push_back(IntOption("cluster-node-timeout", &S::node_timeout_ms, 0, LLONG_MAX, kMutable));
  o.push_back(IntOption("cluster-port", &S::port, 0, 65535, kImmutable));
  o.push_back(StringOption("cluster-announce-ip", &S::announce_ip, kMutable));
  // (Checked as Redis checks them: they go into CLUSTER NODES and nodes.conf.)
  o.push_back(Option{"cluster-announce-hostname", kMutable, 1, 1,
                     [](const Config& c) { return c.cluster.announce_hostname; },
                     [](Config& c, Args a) -> std::string {
                       if (a[0].size() >= 256) return "Hostnames must be less than 256 characters";
                       for (unsigned char ch : a[0])
                         if (!std::isalnum(ch) && ch != '-' && ch != '.')
                           return "Hostnames may only contain alphanumeric characters, hyphens or dots";
                       c.cluster.announce_hostname = a[0];
                       return "";
                     }});
  o.push_back(Option{"cluster-announce-human-nodename", kMutable, 1, 1,
                     [](const Config& c) { return c.cluster.announce_human_nodename; },
                     [](Config& c, Args a) -> std::string {
                       for (unsigned char ch : a[0])
                         if (!std::isalnum(ch) && ch != '-' && ch != '.' && ch != '_')
                           return "Announced human node name contained invalid character";
                       c.cluster.announce_human_nodename = a[0];
                       return "";
                     }});
  o.push_back(IntOption("cluster-announce-port", &S::announce_port, 0, 65535, kMutable));
  o.push_back(IntOption("cluster-announce-bus-port", &S::announce_bus_port, 0, 65535, kMutable));
  o.push_back(IntOption("cluster-announce-tls-port", &S::announce_tls_port, 0, 65535, kMutable));
  o.push_back(Option{"cluster-preferred-endpoint-type", kMutable, 1, 1,
                     [](const Config& c) -> std::string {
                       static const char* kNames[] = {"ip", "hostname", "unknown-endpoint"};
                       return kNames[static_cast<int>(c.cluster.preferred_endpoint)];
                     },
                     [](Config& c, Args a) -> std::string {
                       const std::string v = Lower(a[0]);
                       if (v == "ip") c.cluster.preferred_endpoint = S::Endpoint::kIp;
                       else if (v == "hostname") c.cluster.preferred_endpoint = S::Endpoint::kHostname;
                       else if (v == "unknown-endpoint") c.cluster.preferred_endpoint = S::Endpoint::kUnknown;
                       else return "argument(s) must be one of the following: ip, hostname, unknown-endpoint";
                       return "";
                     }});
  o.push_back(BoolOption("cluster-require-full-coverage", &S::require_full_coverage, kMutable));
  o.push_back(BoolOption("cluster-allow-reads-when-down", &S::allow_reads_when_down, kMutable));
  o.push_back(BoolOption("cluster-allow-pubsubshard-when-down", &S::allow_pubsubshard_when_down, kMutable));
  for (std::string_view name : {"cluster-replica-validity-factor", "cluster-slave-validity-factor"})
    o.push_back(IntOption(name, &S::replica_validity_factor, 0, INT_MAX, kMutable));
  o.push_back(IntOption("cluster-migration-barrier", &S::migration_barrier, 0, INT_MAX, kMutable));
  o.push_back(BoolOption("cluster-allow-replica-migration", &S::allow_replica_migration, kMutable));
  for (std::string_view name : {"cluster-replica-no-failover", "cluster-slave-no-failover"})
    o.push_back(BoolOption(name, &S::replica_no_failover, kMutable));
  o.push_back(Option{"cluster-link-sendbuf-limit", kMutable, 1, 1,
                     [](const Config& c) { return std::to_string(c.cluster.link_sendbuf_limit); },
                     [](Config& c, Args a) -> std::string {
                       auto v = ParseMemorySize(a[0]);
                       if (!v) return "argument must be a memory value";
                       c.cluster.link_sendbuf_limit = *v;
                       return "";
                     }});
}

}  // namespace peregrine::config_options
