#include "core/stream_groups.h"

namespace peregrine {

StreamConsumer* StreamGroup::AddConsumer(std::string_view name, int64_t now_ms) {
  auto [it, added] = consumers.try_emplace(std::string(name));
  if (!added) return nullptr;
  it->second = std::make_unique<StreamConsumer>();
  it->second->name = std::string(name);
  it->second->seen_time = now_ms;
  return it->second.get();
}

size_t StreamGroup::RemoveConsumer(std::string_view name) {
  auto it = consumers.find(name);
  if (it == consumers.end()) return 0;
  const size_t n = it->second->pending.size();
  for (const StreamID& id : it->second->pending) pel.erase(id);
  consumers.erase(it);
  return n;
}

bool StreamGroup::Ack(StreamID id) {
  auto it = pel.find(id);
  if (it == pel.end()) return false;
  if (it->second.consumer != nullptr) it->second.consumer->pending.erase(id);
  pel.erase(it);
  return true;
}

void StreamGroup::MoveNack(StreamID id, StreamNack& nack, StreamConsumer* to) {
  if (nack.consumer == to) return;
  if (nack.consumer != nullptr) nack.consumer->pending.erase(id);
  nack.consumer = to;
  to->pending.insert(id);
}

StreamGroup* StreamGroups::Add(std::string_view name, StreamID last_id, int64_t entries_read) {
  auto [it, added] = groups_.try_emplace(std::string(name));
  if (!added) return nullptr;
  it->second = std::make_unique<StreamGroup>();
  it->second->last_id = last_id;
  it->second->entries_read = entries_read;
  return it->second.get();
}

std::unique_ptr<StreamGroups> StreamGroups::Clone() const {
  auto c = std::make_unique<StreamGroups>();
  for (const auto& [name, g] : groups_) {
    StreamGroup* h = c->Add(name, g->last_id, g->entries_read);
    for (const auto& [cname, consumer] : g->consumers) {
      StreamConsumer* d = h->AddConsumer(cname, consumer->seen_time);
      d->active_time = consumer->active_time;
    }
    for (const auto& [id, nack] : g->pel) {
      StreamNack& n = h->pel[id];
      n.delivery_time = nack.delivery_time;
      n.delivery_count = nack.delivery_count;
      if (nack.consumer != nullptr) {
        n.consumer = h->FindConsumer(nack.consumer->name);
        n.consumer->pending.insert(id);
      }
    }
  }
  return c;
}

size_t StreamGroups::AllocatedBytes() const {
  // A red-black tree node is the value plus 32 bytes of links and colour.
  constexpr size_t kTreeNode = 32;
  size_t total = 0;
  for (const auto& [name, g] : groups_) {
    total += kTreeNode + sizeof(name) + name.capacity() + sizeof(StreamGroup);
    total += g->pel.size() * (kTreeNode + sizeof(StreamID) + sizeof(StreamNack));
    for (const auto& [cname, c] : g->consumers) {
      total += kTreeNode + sizeof(cname) + cname.capacity() + sizeof(StreamConsumer) + c->name.capacity();
      total += c->pending.size() * (kTreeNode + sizeof(StreamID));
    }
  }
  return total;
}

}  // namespace peregrine
