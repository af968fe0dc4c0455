/*
 * Copyright (C) 2026 The ringtrace authors.
 */

// TypedMessage: the base of every typed writer that protoc-gen-ringtrace
// generates from protos/ (headers "protos/.../foo.rtzero.h", classes in
// namespace <package>::rtzero, see docs/encoding.md).
//
//   #include "protos/perfetto/trace/trace_packet.rtzero.h"
//   namespace pb = perfetto::protos::rtzero;
//
//   auto handle = trace_writer.NewTracePacket();
//   pb::TracePacket packet(handle);
//   packet.set_timestamp(ts);
//   pb::TrackEvent event = packet.set_track_event();
//   event.set_type(pb::TrackEvent::Type::TYPE_INSTANT);
//   event.set_name("my_event");
//
// A typed writer is a value holding one encoding::Message pointer; copying it
// copies the pointer. Every setter is an inline call to the matching Message
// appender with the field number as a compile-time constant, so the code the
// compiler emits is the code of the hand-written Append*() call (the
// TypedWriter/HandWritten benchmarks of this component measure it).
//
// Why a wrapper and not a class derived from Message: the Messages are owned
// by the TraceWriterV2 (one per nesting level, constructed as Message), so a
// pointer to a derived writer type would point at an object that is not one;
// casting it so is undefined behaviour. The value wrapper has the same cost
// (a pointer in a register) and is well-defined.
//
// Lifetime and nesting follow Message: a nested writer (returned by set_<msg>()
// or add_<msg>()) stays open until its parent writes another field, begins
// another nested message or is finalized; at that point the nested message's
// end-group tag is written and the nested writer must not be used any more.
// A writer must not outlive its packet (the TracePacketHandle).
//
// Thread model: like Message, used by the thread that owns the writer.

#ifndef INCLUDE_RINGTRACE_TYPED_MESSAGE_H_
#define INCLUDE_RINGTRACE_TYPED_MESSAGE_H_

#include "ringtrace/logging.h"
#include "ringtrace/message.h"

namespace ringtrace {
namespace encoding {

class TypedMessage {
 public:
  // |message| is a packet (TracePacketHandle::get()) or a nested message, and
  // is never null.
  explicit TypedMessage(encoding::Message* message) : message_(message) {
    RT_DCHECK(message != nullptr);
  }

  // The packet of |handle| (an open TracePacketHandle, or any handle whose
  // operator-> yields the packet's Message*) as this message type, e.g.
  // rtzero::TracePacket packet(handle). Unlike handle.get() it does not test
  // the handle for null: the handle must hold a packet. A template so that
  // this header names no type of the ring but Message.
  template <typename PacketHandle>
  explicit TypedMessage(const PacketHandle& handle)
      : message_(handle.operator->()) {}

  // The untyped message, for fields the .proto does not declare.
  encoding::Message* message() const { return message_; }

  // Ends the message now (Message::Finalize()): for a nested message, writes
  // its end-group tag. Idempotent. Optional: the parent's next field does it.
  void Finalize() { message_->Finalize(); }

 protected:
  encoding::Message* message_;
};

}  // namespace encoding
}  // namespace ringtrace

#endif  // INCLUDE_RINGTRACE_TYPED_MESSAGE_H_
