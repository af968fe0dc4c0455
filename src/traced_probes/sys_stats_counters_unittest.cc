/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/sys_stats_counters.h"

#include <ctype.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "protos/perfetto/common/sys_stats_counters.pb.h"

namespace ringtrace {
namespace probes {
namespace {

namespace pb = perfetto::protos;

std::string Lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return s;
}

// Every value of |descriptor| but 0 is in the table exactly once, under
// the key |expected_key| gives (empty: any key), and |limit| is one more
// than the largest.
template <typename Enum>
void ExpectTableCovers(const google::protobuf::EnumDescriptor* descriptor,
                       const CounterName<Enum>* table,
                       size_t count,
                       uint32_t limit,
                       std::string (*expected_key)(const std::string&)) {
  std::set<int> values;
  std::set<std::string> keys;
  for (size_t i = 0; i < count; i++) {
    const int value = static_cast<int>(table[i].counter);
    EXPECT_TRUE(values.insert(value).second) << value;
    EXPECT_TRUE(keys.insert(table[i].key).second) << table[i].key;
    const google::protobuf::EnumValueDescriptor* v =
        descriptor->FindValueByNumber(value);
    ASSERT_NE(v, nullptr) << value;
    EXPECT_NE(value, 0);
    if (expected_key) {
      EXPECT_EQ(table[i].key, expected_key(v->name()));
    }
  }
  int max = 0;
  for (int i = 0; i < descriptor->value_count(); i++) {
    const int value = descriptor->value(i)->number();
    max = std::max(max, value);
    if (value != 0) {
      EXPECT_EQ(values.count(value), 1u) << descriptor->value(i)->name();
    }
  }
  EXPECT_EQ(static_cast<uint32_t>(max) + 1, limit);
}

std::string VmstatKey(const std::string& enum_name) {
  EXPECT_EQ(enum_name.rfind("VMSTAT_", 0), 0u) << enum_name;
  return Lower(enum_name.substr(7));
}

TEST(SysStatsCountersTest, TheMeminfoTableCoversItsEnum) {
  size_t count = 0;
  const auto* table = MeminfoCounterNames(&count);
  ExpectTableCovers(pb::MeminfoCounters_descriptor(), table, count,
                    kMeminfoCounterLimit, nullptr);
}

TEST(SysStatsCountersTest, TheVmstatTableIsTheEnumsNamesInLowerCase) {
  size_t count = 0;
  const auto* table = VmstatCounterNames(&count);
  ExpectTableCovers(pb::VmstatCounters_descriptor(), table, count,
                    kVmstatCounterLimit, VmstatKey);
}

TEST(SysStatsCountersTest, LooksUpTheKernelsNames) {
  MeminfoCounter m;
  ASSERT_TRUE(MeminfoCounterForKey("MemTotal", &m));
  EXPECT_EQ(static_cast<int>(m), pb::MEMINFO_MEM_TOTAL);
  ASSERT_TRUE(MeminfoCounterForKey("Active(anon)", &m));
  EXPECT_EQ(static_cast<int>(m), pb::MEMINFO_ACTIVE_ANON);
  ASSERT_TRUE(MeminfoCounterForKey("Inactive(file)", &m));
  EXPECT_EQ(static_cast<int>(m), pb::MEMINFO_INACTIVE_FILE);
  ASSERT_TRUE(MeminfoCounterForKey("SReclaimable", &m));
  EXPECT_EQ(static_cast<int>(m), pb::MEMINFO_SLAB_RECLAIMABLE);
  ASSERT_TRUE(MeminfoCounterForKey("SUnreclaim", &m));
  EXPECT_EQ(static_cast<int>(m), pb::MEMINFO_SLAB_UNRECLAIMABLE);
  ASSERT_TRUE(MeminfoCounterForKey("Committed_AS", &m));
  EXPECT_EQ(static_cast<int>(m), pb::MEMINFO_COMMITED_AS);
  EXPECT_FALSE(MeminfoCounterForKey("memtotal", &m));
  EXPECT_FALSE(MeminfoCounterForKey("", &m));
  EXPECT_FALSE(MeminfoCounterForKey("Zswap", &m));

  VmstatCounter v;
  ASSERT_TRUE(VmstatCounterForKey("nr_free_pages", &v));
  EXPECT_EQ(static_cast<int>(v), pb::VMSTAT_NR_FREE_PAGES);
  ASSERT_TRUE(VmstatCounterForKey("workingset_restore_file", &v));
  EXPECT_EQ(static_cast<int>(v), pb::VMSTAT_WORKINGSET_RESTORE_FILE);
  EXPECT_FALSE(VmstatCounterForKey("NR_FREE_PAGES", &v));
}

}  // namespace
}  // namespace probes
}  // namespace ringtrace
