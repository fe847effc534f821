// /metrics: INFO's fields under redis_exporter's names, types and labels,
// Peregrine's per-worker figures, and the HTTP answers to bad requests.
#include "server/metrics_text.h"

#include <gtest/gtest.h>

#include <string>

#include "server/metrics_http.h"

namespace peregrine {
namespace {

constexpr const char* kInfo =
    "# Server\r\n"
    "redis_version:7.2.4\r\n"
    "redis_mode:standalone\r\n"
    "os:Linux \"x\" 6.1\r\n"
    "process_id:42\r\n"
    "run_id:abc\r\n"
    "tcp_port:6379\r\n"
    "uptime_in_seconds:100\r\n"
    "hz:10\r\n"
    "listener0:name=tcp,bind=*,port=6379\r\n"
    "\r\n"
    "# Clients\r\n"
    "connected_clients:3\r\n"
    "maxclients:10000\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:1000\r\n"
    "used_memory_human:1000B\r\n"
    "maxmemory_policy:noeviction\r\n"
    "\r\n"
    "# Persistence\r\n"
    "rdb_last_bgsave_status:ok\r\n"
    "aof_last_write_status:err\r\n"
    "\r\n"
    "# Stats\r\n"
    "total_commands_processed:77\r\n"
    "latest_fork_usec:2500\r\n"
    "expired_time_cap_reached_count:4\r\n"
    "\r\n"
    "# Replication\r\n"
    "role:master\r\n"
    "connected_slaves:1\r\n"
    "slave0:ip=127.0.0.1,port=7000,state=online,offset=321,lag=1\r\n"
    "master_replid:r1\r\n"
    "master_repl_offset:321\r\n"
    "\r\n"
    "# CPU\r\n"
    "used_cpu_sys:1.500000\r\n"
    "\r\n"
    "# Commandstats\r\n"
    "cmdstat_get:calls=10,usec=20,usec_per_call=2.00,rejected_calls=1,failed_calls=2\r\n"
    "cmdstat_config|get:calls=1,usec=5,usec_per_call=5.00,rejected_calls=0,failed_calls=0\r\n"
    "\r\n"
    "# Errorstats\r\n"
    "errorstat_WRONGTYPE:count=5\r\n"
    "\r\n"
    "# Latencystats\r\n"
    "latency_percentiles_usec_get:p50=1.003,p99=2.007,p99.9=3.007\r\n"
    "latency_percentiles_usec_gone:p50=1.003\r\n"
    "\r\n"
    "# Cluster\r\n"
    "cluster_enabled:0\r\n"
    "\r\n"
    "# Keyspace\r\n"
    "db0:keys=5,expires=2,avg_ttl=3000\r\n"
    "db2:keys=1,expires=0,avg_ttl=0\r\n"
    "\r\n"
    "# Peregrine\r\n"
    "peregrine_version:0.1.0\r\n"
    "threads:2\r\n"
    "cross_shard_batches:9\r\n"
    "worker0:clients=1,keys=3,commands=50,ops_per_sec=0,loop_cycles=7,loop_usec=1500000\r\n"
    "worker1:clients=2,keys=3,commands=27,ops_per_sec=4,loop_cycles=8,loop_usec=2\r\n";

bool Has(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}

TEST(Metrics, MappedFieldsTakeTheExportersNamesAndTypes) {
  const std::string t = PrometheusFromInfo(kInfo, 4, 1000);
  EXPECT_TRUE(Has(t, "# TYPE redis_connected_clients gauge")) << t;
  EXPECT_TRUE(Has(t, "redis_connected_clients 3"));
  EXPECT_TRUE(Has(t, "redis_max_clients 10000"));
  EXPECT_TRUE(Has(t, "redis_memory_used_bytes 1000"));
  EXPECT_TRUE(Has(t, "# TYPE redis_commands_processed_total counter"));
  EXPECT_TRUE(Has(t, "redis_commands_processed_total 77"));
  EXPECT_TRUE(Has(t, "redis_cpu_sys_seconds_total 1.5"));
  // ok/err read 1/0; latest_fork_usec becomes seconds; the one field in
  // both of the exporter's maps: its gauge name, counted.
  EXPECT_TRUE(Has(t, "redis_rdb_last_bgsave_status 1"));
  EXPECT_TRUE(Has(t, "redis_aof_last_write_status 0"));
  EXPECT_TRUE(Has(t, "redis_latest_fork_seconds 0.0025"));
  EXPECT_TRUE(Has(t, "# TYPE redis_expired_time_cap_reached_total counter"));
  // cluster_* pass under their own names; text and unmapped fields do not.
  EXPECT_TRUE(Has(t, "redis_cluster_enabled 0"));
  EXPECT_EQ(t.find("used_memory_human"), std::string::npos);
  EXPECT_EQ(t.find("listener0"), std::string::npos);
  EXPECT_TRUE(Has(t, "redis_start_time_seconds 900"));
  EXPECT_TRUE(Has(t, "redis_hz 10"));
  EXPECT_TRUE(Has(t, "redis_up 1"));
}

TEST(Metrics, KeyspaceCommandsErrorsAndLatencies) {
  const std::string t = PrometheusFromInfo(kInfo, 4, 1000);
  EXPECT_TRUE(Has(t, "redis_db_keys{db=\"db0\"} 5")) << t;
  EXPECT_TRUE(Has(t, "redis_db_keys_expiring{db=\"db0\"} 2"));
  EXPECT_TRUE(Has(t, "redis_db_avg_ttl_seconds{db=\"db0\"} 3"));
  // The empty databases below `databases` read 0 (db2 has keys).
  EXPECT_TRUE(Has(t, "redis_db_keys{db=\"db1\"} 0"));
  EXPECT_TRUE(Has(t, "redis_db_keys{db=\"db3\"} 0"));
  EXPECT_TRUE(Has(t, "redis_db_keys{db=\"db2\"} 1"));
  EXPECT_EQ(t.find("db=\"db4\""), std::string::npos);
  EXPECT_TRUE(Has(t, "redis_commands_total{cmd=\"get\"} 10"));
  EXPECT_TRUE(Has(t, "redis_commands_total{cmd=\"config|get\"} 1"));
  EXPECT_TRUE(Has(t, "redis_commands_duration_seconds_total{cmd=\"get\"} 2e-05"));
  EXPECT_TRUE(Has(t, "redis_commands_rejected_calls_total{cmd=\"get\"} 1"));
  EXPECT_TRUE(Has(t, "redis_commands_failed_calls_total{cmd=\"get\"} 2"));
  EXPECT_TRUE(Has(t, "redis_errors_total{err=\"WRONGTYPE\"} 5"));
  EXPECT_TRUE(Has(t, "# TYPE redis_latency_percentiles_usec summary"));
  EXPECT_TRUE(Has(t, "redis_latency_percentiles_usec{cmd=\"get\",quantile=\"99.9\"} 3.007"));
  EXPECT_TRUE(Has(t, "redis_latency_percentiles_usec_sum{cmd=\"get\"} 20"));
  EXPECT_TRUE(Has(t, "redis_latency_percentiles_usec_count{cmd=\"get\"} 10"));
  // (Percentiles of a command without commandstats: no summary.)
  EXPECT_EQ(t.find("cmd=\"gone\""), std::string::npos);
}

TEST(Metrics, ReplicationAndInstanceLabels) {
  const std::string t = PrometheusFromInfo(kInfo, 1, 1000);
  EXPECT_TRUE(Has(t, "redis_connected_slave_offset_bytes{slave_ip=\"127.0.0.1\",slave_port=\"7000\","
                     "slave_state=\"online\"} 321"))
      << t;
  EXPECT_TRUE(Has(t, "redis_connected_slave_lag_seconds{slave_ip=\"127.0.0.1\",slave_port=\"7000\","
                     "slave_state=\"online\"} 1"));
  EXPECT_TRUE(Has(t, "redis_connected_slaves 1"));
  // Labels sorted by name; a quote in a value escaped.
  EXPECT_TRUE(Has(t, "redis_instance_info{master_replid=\"r1\",maxmemory_policy=\"noeviction\","
                     "os=\"Linux \\\"x\\\" 6.1\",process_id=\"42\",redis_build_id=\"\",redis_mode=\"standalone\","
                     "redis_version=\"7.2.4\",role=\"master\",run_id=\"abc\",tcp_port=\"6379\"} 1"));
  EXPECT_EQ(t.find("redis_slave_info"), std::string::npos);

  const std::string replica = PrometheusFromInfo(
      "# Replication\r\nrole:slave\r\nmaster_host:10.0.0.1\r\nmaster_port:6380\r\nmaster_link_status:down\r\n"
      "master_last_io_seconds_ago:-1\r\nmaster_sync_in_progress:0\r\nslave_repl_offset:55\r\nslave_read_only:1\r\n",
      0, 0);
  const std::string at = "{master_host=\"10.0.0.1\",master_port=\"6380\"}";
  EXPECT_TRUE(Has(replica, "redis_master_link_up" + at + " 0")) << replica;
  EXPECT_TRUE(Has(replica, "redis_master_last_io_seconds_ago" + at + " -1"));
  EXPECT_TRUE(Has(replica, "redis_master_sync_in_progress" + at + " 0"));
  EXPECT_TRUE(Has(replica, "redis_slave_repl_offset" + at + " 55"));
  EXPECT_TRUE(Has(replica, "redis_slave_info{master_host=\"10.0.0.1\",master_port=\"6380\",read_only=\"1\"} 1"));
}

TEST(Metrics, PeregrinesPerWorkerFigures) {
  const std::string t = PrometheusFromInfo(kInfo, 1, 1000);
  EXPECT_TRUE(Has(t, "peregrine_info{version=\"0.1.0\"} 1")) << t;
  EXPECT_TRUE(Has(t, "# TYPE peregrine_threads gauge"));
  EXPECT_TRUE(Has(t, "peregrine_threads 2"));
  EXPECT_TRUE(Has(t, "# TYPE peregrine_cross_shard_batches_total counter"));
  EXPECT_TRUE(Has(t, "peregrine_cross_shard_batches_total 9"));
  EXPECT_TRUE(Has(t, "# TYPE peregrine_worker_clients gauge"));
  EXPECT_TRUE(Has(t, "peregrine_worker_clients{worker=\"1\"} 2"));
  EXPECT_TRUE(Has(t, "peregrine_worker_commands_total{worker=\"0\"} 50"));
  EXPECT_TRUE(Has(t, "peregrine_worker_ops_per_sec{worker=\"1\"} 4"));
  EXPECT_TRUE(Has(t, "peregrine_worker_loop_seconds_total{worker=\"0\"} 1.5"));
  // Each family once, its samples together.
  const size_t first = t.find("# TYPE peregrine_worker_keys gauge");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(t.find("# TYPE peregrine_worker_keys gauge", first + 1), std::string::npos);
  const size_t w0 = t.find("peregrine_worker_keys{worker=\"0\"} 3\n"), w1 = t.find("peregrine_worker_keys{worker=\"1\"} 3\n");
  ASSERT_TRUE(w0 != std::string::npos && w1 != std::string::npos && w0 < w1);
  EXPECT_EQ(t.substr(w0, w1 - w0).find("# "), std::string::npos);
}

TEST(Metrics, HttpAnswers) {
  int made = 0;
  auto metrics = [&] {
    made++;
    return std::string("redis_up 1\n");
  };
  std::string r = MetricsEndpoint::Respond("GET /metrics HTTP/1.1\r\nHost: x", metrics);
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
  EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), std::string::npos);
  EXPECT_NE(r.find("Content-Length: 11\r\n"), std::string::npos);
  EXPECT_TRUE(r.ends_with("\r\n\r\nredis_up 1\n"));
  EXPECT_EQ(made, 1);
  // HEAD: the headers alone; a query string is ignored.
  r = MetricsEndpoint::Respond("HEAD /metrics?x=1 HTTP/1.0", metrics);
  EXPECT_NE(r.find("Content-Length: 11\r\n"), std::string::npos);
  EXPECT_TRUE(r.ends_with("\r\n\r\n"));
  EXPECT_EQ(MetricsEndpoint::Respond("GET /other HTTP/1.1", metrics).rfind("HTTP/1.1 404 ", 0), 0u);
  r = MetricsEndpoint::Respond("POST /metrics HTTP/1.1", metrics);
  EXPECT_EQ(r.rfind("HTTP/1.1 405 ", 0), 0u);
  EXPECT_NE(r.find("Allow: GET, HEAD\r\n"), std::string::npos);
  for (const char* bad : {"", "GET", "GET /metrics", "GET  HTTP/1.1", "GET /metrics FTP/1", "GET /a b HTTP/1.1"})
    EXPECT_EQ(MetricsEndpoint::Respond(bad, metrics).rfind("HTTP/1.1 400 ", 0), 0u) << bad;
  EXPECT_EQ(made, 2);  // (only the GET and HEAD of /metrics made it)
}

}  // namespace
}  // namespace peregrine
