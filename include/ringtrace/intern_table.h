/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// InternTable<Key>: the interning helper of a data source's incremental
// state (ringtrace/data_source.h). A packet sequence refers to a repeated
// value (a name, a callstack) by a small id (iid) and defines each iid once,
// in the InternedData of the first packet that uses it:
//
//   struct MyIncrementalState {
//     ringtrace::InternTable<std::string> names;
//   };
//   ...
//   MyIncrementalState* state = ctx.GetIncrementalState();
//   auto packet = ctx.NewTracePacket<rtzero::MyPacket>();
//   bool is_new = false;
//   const uint64_t iid = state->names.Intern(name, &is_new);
//   if (is_new) {
//     auto entry = rtzero::MyInternedData(packet->set_interned_data())
//                      .add_my_names();
//     entry.set_iid(iid);
//     entry.set_name(name);
//   }
//   packet->set_my_event().set_name_iid(iid);
//
// iids count from 1 (0 is never an iid). The table lives in the incremental
// state, so it starts empty again after every reset (a loss, the clear
// period), exactly when the sequence's next packet says
// SEQ_INCREMENTAL_STATE_CLEARED and the definitions must be written again.
// It grows with the distinct keys seen between two resets; a data source
// whose keys are unbounded clears it itself (Clear()) when size() passes a
// bound, and must then treat every key as new (is_new is true again), as
// after a reset: the reader keeps the old definitions, and the new iids
// never reuse an old one on the same generation.
//
// Thread model: one thread (the incremental state is per thread).

#ifndef INCLUDE_RINGTRACE_INTERN_TABLE_H_
#define INCLUDE_RINGTRACE_INTERN_TABLE_H_

#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <unordered_map>

namespace ringtrace {

template <class Key, class Hash = std::hash<Key>>
class InternTable {
 public:
  // The iid of |key|; |*is_new| (if not null) says whether it was assigned
  // by this call, i.e. the packet must define it.
  uint64_t Intern(const Key& key, bool* is_new = nullptr) {
    auto [it, inserted] = ids_.emplace(key, next_iid_);
    if (inserted)
      next_iid_++;
    if (is_new)
      *is_new = inserted;
    return it->second;
  }

  // Forgets every key; the iids go on counting up.
  void Clear() { ids_.clear(); }

  size_t size() const { return ids_.size(); }

 private:
  std::unordered_map<Key, uint64_t, Hash> ids_;
  uint64_t next_iid_ = 1;
};

}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_INTERN_TABLE_H_
