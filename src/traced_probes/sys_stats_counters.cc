/*
 * Copyright (C) 2026 The ringtrace authors.
 */

#include "src/traced_probes/sys_stats_counters.h"

#include <unordered_map>

namespace ringtrace {
namespace probes {
namespace {

using Meminfo = MeminfoCounter;
using Vmstat = VmstatCounter;

// The kernel's names (fs/proc/meminfo.c). The last five are not in a
// mainline kernel's /proc/meminfo (Android and vendor kernels): their keys
// are the enum names in the file's CamelCase.
constexpr CounterName<Meminfo> kMeminfo[] = {
    {"MemTotal", Meminfo::MEMINFO_MEM_TOTAL},
    {"MemFree", Meminfo::MEMINFO_MEM_FREE},
    {"MemAvailable", Meminfo::MEMINFO_MEM_AVAILABLE},
    {"Buffers", Meminfo::MEMINFO_BUFFERS},
    {"Cached", Meminfo::MEMINFO_CACHED},
    {"SwapCached", Meminfo::MEMINFO_SWAP_CACHED},
    {"Active", Meminfo::MEMINFO_ACTIVE},
    {"Inactive", Meminfo::MEMINFO_INACTIVE},
    {"Active(anon)", Meminfo::MEMINFO_ACTIVE_ANON},
    {"Inactive(anon)", Meminfo::MEMINFO_INACTIVE_ANON},
    {"Active(file)", Meminfo::MEMINFO_ACTIVE_FILE},
    {"Inactive(file)", Meminfo::MEMINFO_INACTIVE_FILE},
    {"Unevictable", Meminfo::MEMINFO_UNEVICTABLE},
    {"Mlocked", Meminfo::MEMINFO_MLOCKED},
    {"SwapTotal", Meminfo::MEMINFO_SWAP_TOTAL},
    {"SwapFree", Meminfo::MEMINFO_SWAP_FREE},
    {"Dirty", Meminfo::MEMINFO_DIRTY},
    {"Writeback", Meminfo::MEMINFO_WRITEBACK},
    {"AnonPages", Meminfo::MEMINFO_ANON_PAGES},
    {"Mapped", Meminfo::MEMINFO_MAPPED},
    {"Shmem", Meminfo::MEMINFO_SHMEM},
    {"Slab", Meminfo::MEMINFO_SLAB},
    {"SReclaimable", Meminfo::MEMINFO_SLAB_RECLAIMABLE},
    {"SUnreclaim", Meminfo::MEMINFO_SLAB_UNRECLAIMABLE},
    {"KernelStack", Meminfo::MEMINFO_KERNEL_STACK},
    {"PageTables", Meminfo::MEMINFO_PAGE_TABLES},
    {"CommitLimit", Meminfo::MEMINFO_COMMIT_LIMIT},
    {"Committed_AS", Meminfo::MEMINFO_COMMITED_AS},
    {"VmallocTotal", Meminfo::MEMINFO_VMALLOC_TOTAL},
    {"VmallocUsed", Meminfo::MEMINFO_VMALLOC_USED},
    {"VmallocChunk", Meminfo::MEMINFO_VMALLOC_CHUNK},
    {"CmaTotal", Meminfo::MEMINFO_CMA_TOTAL},
    {"CmaFree", Meminfo::MEMINFO_CMA_FREE},
    {"Gpu", Meminfo::MEMINFO_GPU},
    {"Zram", Meminfo::MEMINFO_ZRAM},
    {"Misc", Meminfo::MEMINFO_MISC},
    {"IonHeap", Meminfo::MEMINFO_ION_HEAP},
    {"IonHeapPool", Meminfo::MEMINFO_ION_HEAP_POOL},
};

// The enum names in lower case without "VMSTAT_" (mm/vmstat.c's names).
constexpr CounterName<Vmstat> kVmstat[] = {
    {"nr_free_pages", Vmstat::VMSTAT_NR_FREE_PAGES},
    {"nr_alloc_batch", Vmstat::VMSTAT_NR_ALLOC_BATCH},
    {"nr_inactive_anon", Vmstat::VMSTAT_NR_INACTIVE_ANON},
    {"nr_active_anon", Vmstat::VMSTAT_NR_ACTIVE_ANON},
    {"nr_inactive_file", Vmstat::VMSTAT_NR_INACTIVE_FILE},
    {"nr_active_file", Vmstat::VMSTAT_NR_ACTIVE_FILE},
    {"nr_unevictable", Vmstat::VMSTAT_NR_UNEVICTABLE},
    {"nr_mlock", Vmstat::VMSTAT_NR_MLOCK},
    {"nr_anon_pages", Vmstat::VMSTAT_NR_ANON_PAGES},
    {"nr_mapped", Vmstat::VMSTAT_NR_MAPPED},
    {"nr_file_pages", Vmstat::VMSTAT_NR_FILE_PAGES},
    {"nr_dirty", Vmstat::VMSTAT_NR_DIRTY},
    {"nr_writeback", Vmstat::VMSTAT_NR_WRITEBACK},
    {"nr_slab_reclaimable", Vmstat::VMSTAT_NR_SLAB_RECLAIMABLE},
    {"nr_slab_unreclaimable", Vmstat::VMSTAT_NR_SLAB_UNRECLAIMABLE},
    {"nr_page_table_pages", Vmstat::VMSTAT_NR_PAGE_TABLE_PAGES},
    {"nr_kernel_stack", Vmstat::VMSTAT_NR_KERNEL_STACK},
    {"nr_overhead", Vmstat::VMSTAT_NR_OVERHEAD},
    {"nr_unstable", Vmstat::VMSTAT_NR_UNSTABLE},
    {"nr_bounce", Vmstat::VMSTAT_NR_BOUNCE},
    {"nr_vmscan_write", Vmstat::VMSTAT_NR_VMSCAN_WRITE},
    {"nr_vmscan_immediate_reclaim", Vmstat::VMSTAT_NR_VMSCAN_IMMEDIATE_RECLAIM},
    {"nr_writeback_temp", Vmstat::VMSTAT_NR_WRITEBACK_TEMP},
    {"nr_isolated_anon", Vmstat::VMSTAT_NR_ISOLATED_ANON},
    {"nr_isolated_file", Vmstat::VMSTAT_NR_ISOLATED_FILE},
    {"nr_shmem", Vmstat::VMSTAT_NR_SHMEM},
    {"nr_dirtied", Vmstat::VMSTAT_NR_DIRTIED},
    {"nr_written", Vmstat::VMSTAT_NR_WRITTEN},
    {"nr_pages_scanned", Vmstat::VMSTAT_NR_PAGES_SCANNED},
    {"workingset_refault", Vmstat::VMSTAT_WORKINGSET_REFAULT},
    {"workingset_activate", Vmstat::VMSTAT_WORKINGSET_ACTIVATE},
    {"workingset_nodereclaim", Vmstat::VMSTAT_WORKINGSET_NODERECLAIM},
    {"nr_anon_transparent_hugepages",
     Vmstat::VMSTAT_NR_ANON_TRANSPARENT_HUGEPAGES},
    {"nr_free_cma", Vmstat::VMSTAT_NR_FREE_CMA},
    {"nr_swapcache", Vmstat::VMSTAT_NR_SWAPCACHE},
    {"nr_dirty_threshold", Vmstat::VMSTAT_NR_DIRTY_THRESHOLD},
    {"nr_dirty_background_threshold",
     Vmstat::VMSTAT_NR_DIRTY_BACKGROUND_THRESHOLD},
    {"pgpgin", Vmstat::VMSTAT_PGPGIN},
    {"pgpgout", Vmstat::VMSTAT_PGPGOUT},
    {"pgpgoutclean", Vmstat::VMSTAT_PGPGOUTCLEAN},
    {"pswpin", Vmstat::VMSTAT_PSWPIN},
    {"pswpout", Vmstat::VMSTAT_PSWPOUT},
    {"pgalloc_dma", Vmstat::VMSTAT_PGALLOC_DMA},
    {"pgalloc_normal", Vmstat::VMSTAT_PGALLOC_NORMAL},
    {"pgalloc_movable", Vmstat::VMSTAT_PGALLOC_MOVABLE},
    {"pgfree", Vmstat::VMSTAT_PGFREE},
    {"pgactivate", Vmstat::VMSTAT_PGACTIVATE},
    {"pgdeactivate", Vmstat::VMSTAT_PGDEACTIVATE},
    {"pgfault", Vmstat::VMSTAT_PGFAULT},
    {"pgmajfault", Vmstat::VMSTAT_PGMAJFAULT},
    {"pgrefill_dma", Vmstat::VMSTAT_PGREFILL_DMA},
    {"pgrefill_normal", Vmstat::VMSTAT_PGREFILL_NORMAL},
    {"pgrefill_movable", Vmstat::VMSTAT_PGREFILL_MOVABLE},
    {"pgsteal_kswapd_dma", Vmstat::VMSTAT_PGSTEAL_KSWAPD_DMA},
    {"pgsteal_kswapd_normal", Vmstat::VMSTAT_PGSTEAL_KSWAPD_NORMAL},
    {"pgsteal_kswapd_movable", Vmstat::VMSTAT_PGSTEAL_KSWAPD_MOVABLE},
    {"pgsteal_direct_dma", Vmstat::VMSTAT_PGSTEAL_DIRECT_DMA},
    {"pgsteal_direct_normal", Vmstat::VMSTAT_PGSTEAL_DIRECT_NORMAL},
    {"pgsteal_direct_movable", Vmstat::VMSTAT_PGSTEAL_DIRECT_MOVABLE},
    {"pgscan_kswapd_dma", Vmstat::VMSTAT_PGSCAN_KSWAPD_DMA},
    {"pgscan_kswapd_normal", Vmstat::VMSTAT_PGSCAN_KSWAPD_NORMAL},
    {"pgscan_kswapd_movable", Vmstat::VMSTAT_PGSCAN_KSWAPD_MOVABLE},
    {"pgscan_direct_dma", Vmstat::VMSTAT_PGSCAN_DIRECT_DMA},
    {"pgscan_direct_normal", Vmstat::VMSTAT_PGSCAN_DIRECT_NORMAL},
    {"pgscan_direct_movable", Vmstat::VMSTAT_PGSCAN_DIRECT_MOVABLE},
    {"pgscan_direct_throttle", Vmstat::VMSTAT_PGSCAN_DIRECT_THROTTLE},
    {"pginodesteal", Vmstat::VMSTAT_PGINODESTEAL},
    {"slabs_scanned", Vmstat::VMSTAT_SLABS_SCANNED},
    {"kswapd_inodesteal", Vmstat::VMSTAT_KSWAPD_INODESTEAL},
    {"kswapd_low_wmark_hit_quickly",
     Vmstat::VMSTAT_KSWAPD_LOW_WMARK_HIT_QUICKLY},
    {"kswapd_high_wmark_hit_quickly",
     Vmstat::VMSTAT_KSWAPD_HIGH_WMARK_HIT_QUICKLY},
    {"pageoutrun", Vmstat::VMSTAT_PAGEOUTRUN},
    {"allocstall", Vmstat::VMSTAT_ALLOCSTALL},
    {"pgrotated", Vmstat::VMSTAT_PGROTATED},
    {"drop_pagecache", Vmstat::VMSTAT_DROP_PAGECACHE},
    {"drop_slab", Vmstat::VMSTAT_DROP_SLAB},
    {"pgmigrate_success", Vmstat::VMSTAT_PGMIGRATE_SUCCESS},
    {"pgmigrate_fail", Vmstat::VMSTAT_PGMIGRATE_FAIL},
    {"compact_migrate_scanned", Vmstat::VMSTAT_COMPACT_MIGRATE_SCANNED},
    {"compact_free_scanned", Vmstat::VMSTAT_COMPACT_FREE_SCANNED},
    {"compact_isolated", Vmstat::VMSTAT_COMPACT_ISOLATED},
    {"compact_stall", Vmstat::VMSTAT_COMPACT_STALL},
    {"compact_fail", Vmstat::VMSTAT_COMPACT_FAIL},
    {"compact_success", Vmstat::VMSTAT_COMPACT_SUCCESS},
    {"compact_daemon_wake", Vmstat::VMSTAT_COMPACT_DAEMON_WAKE},
    {"unevictable_pgs_culled", Vmstat::VMSTAT_UNEVICTABLE_PGS_CULLED},
    {"unevictable_pgs_scanned", Vmstat::VMSTAT_UNEVICTABLE_PGS_SCANNED},
    {"unevictable_pgs_rescued", Vmstat::VMSTAT_UNEVICTABLE_PGS_RESCUED},
    {"unevictable_pgs_mlocked", Vmstat::VMSTAT_UNEVICTABLE_PGS_MLOCKED},
    {"unevictable_pgs_munlocked", Vmstat::VMSTAT_UNEVICTABLE_PGS_MUNLOCKED},
    {"unevictable_pgs_cleared", Vmstat::VMSTAT_UNEVICTABLE_PGS_CLEARED},
    {"unevictable_pgs_stranded", Vmstat::VMSTAT_UNEVICTABLE_PGS_STRANDED},
    {"nr_zspages", Vmstat::VMSTAT_NR_ZSPAGES},
    {"nr_ion_heap", Vmstat::VMSTAT_NR_ION_HEAP},
    {"nr_gpu_heap", Vmstat::VMSTAT_NR_GPU_HEAP},
    {"allocstall_dma", Vmstat::VMSTAT_ALLOCSTALL_DMA},
    {"allocstall_movable", Vmstat::VMSTAT_ALLOCSTALL_MOVABLE},
    {"allocstall_normal", Vmstat::VMSTAT_ALLOCSTALL_NORMAL},
    {"compact_daemon_free_scanned", Vmstat::VMSTAT_COMPACT_DAEMON_FREE_SCANNED},
    {"compact_daemon_migrate_scanned",
     Vmstat::VMSTAT_COMPACT_DAEMON_MIGRATE_SCANNED},
    {"nr_fastrpc", Vmstat::VMSTAT_NR_FASTRPC},
    {"nr_indirectly_reclaimable", Vmstat::VMSTAT_NR_INDIRECTLY_RECLAIMABLE},
    {"nr_ion_heap_pool", Vmstat::VMSTAT_NR_ION_HEAP_POOL},
    {"nr_kernel_misc_reclaimable", Vmstat::VMSTAT_NR_KERNEL_MISC_RECLAIMABLE},
    {"nr_shadow_call_stack_bytes", Vmstat::VMSTAT_NR_SHADOW_CALL_STACK_BYTES},
    {"nr_shmem_hugepages", Vmstat::VMSTAT_NR_SHMEM_HUGEPAGES},
    {"nr_shmem_pmdmapped", Vmstat::VMSTAT_NR_SHMEM_PMDMAPPED},
    {"nr_unreclaimable_pages", Vmstat::VMSTAT_NR_UNRECLAIMABLE_PAGES},
    {"nr_zone_active_anon", Vmstat::VMSTAT_NR_ZONE_ACTIVE_ANON},
    {"nr_zone_active_file", Vmstat::VMSTAT_NR_ZONE_ACTIVE_FILE},
    {"nr_zone_inactive_anon", Vmstat::VMSTAT_NR_ZONE_INACTIVE_ANON},
    {"nr_zone_inactive_file", Vmstat::VMSTAT_NR_ZONE_INACTIVE_FILE},
    {"nr_zone_unevictable", Vmstat::VMSTAT_NR_ZONE_UNEVICTABLE},
    {"nr_zone_write_pending", Vmstat::VMSTAT_NR_ZONE_WRITE_PENDING},
    {"oom_kill", Vmstat::VMSTAT_OOM_KILL},
    {"pglazyfree", Vmstat::VMSTAT_PGLAZYFREE},
    {"pglazyfreed", Vmstat::VMSTAT_PGLAZYFREED},
    {"pgrefill", Vmstat::VMSTAT_PGREFILL},
    {"pgscan_direct", Vmstat::VMSTAT_PGSCAN_DIRECT},
    {"pgscan_kswapd", Vmstat::VMSTAT_PGSCAN_KSWAPD},
    {"pgskip_dma", Vmstat::VMSTAT_PGSKIP_DMA},
    {"pgskip_movable", Vmstat::VMSTAT_PGSKIP_MOVABLE},
    {"pgskip_normal", Vmstat::VMSTAT_PGSKIP_NORMAL},
    {"pgsteal_direct", Vmstat::VMSTAT_PGSTEAL_DIRECT},
    {"pgsteal_kswapd", Vmstat::VMSTAT_PGSTEAL_KSWAPD},
    {"swap_ra", Vmstat::VMSTAT_SWAP_RA},
    {"swap_ra_hit", Vmstat::VMSTAT_SWAP_RA_HIT},
    {"workingset_restore", Vmstat::VMSTAT_WORKINGSET_RESTORE},
    {"allocstall_device", Vmstat::VMSTAT_ALLOCSTALL_DEVICE},
    {"allocstall_dma32", Vmstat::VMSTAT_ALLOCSTALL_DMA32},
    {"balloon_deflate", Vmstat::VMSTAT_BALLOON_DEFLATE},
    {"balloon_inflate", Vmstat::VMSTAT_BALLOON_INFLATE},
    {"balloon_migrate", Vmstat::VMSTAT_BALLOON_MIGRATE},
    {"cma_alloc_fail", Vmstat::VMSTAT_CMA_ALLOC_FAIL},
    {"cma_alloc_success", Vmstat::VMSTAT_CMA_ALLOC_SUCCESS},
    {"nr_file_hugepages", Vmstat::VMSTAT_NR_FILE_HUGEPAGES},
    {"nr_file_pmdmapped", Vmstat::VMSTAT_NR_FILE_PMDMAPPED},
    {"nr_foll_pin_acquired", Vmstat::VMSTAT_NR_FOLL_PIN_ACQUIRED},
    {"nr_foll_pin_released", Vmstat::VMSTAT_NR_FOLL_PIN_RELEASED},
    {"nr_sec_page_table_pages", Vmstat::VMSTAT_NR_SEC_PAGE_TABLE_PAGES},
    {"nr_shadow_call_stack", Vmstat::VMSTAT_NR_SHADOW_CALL_STACK},
    {"nr_swapcached", Vmstat::VMSTAT_NR_SWAPCACHED},
    {"nr_throttled_written", Vmstat::VMSTAT_NR_THROTTLED_WRITTEN},
    {"pgalloc_device", Vmstat::VMSTAT_PGALLOC_DEVICE},
    {"pgalloc_dma32", Vmstat::VMSTAT_PGALLOC_DMA32},
    {"pgdemote_direct", Vmstat::VMSTAT_PGDEMOTE_DIRECT},
    {"pgdemote_kswapd", Vmstat::VMSTAT_PGDEMOTE_KSWAPD},
    {"pgreuse", Vmstat::VMSTAT_PGREUSE},
    {"pgscan_anon", Vmstat::VMSTAT_PGSCAN_ANON},
    {"pgscan_file", Vmstat::VMSTAT_PGSCAN_FILE},
    {"pgskip_device", Vmstat::VMSTAT_PGSKIP_DEVICE},
    {"pgskip_dma32", Vmstat::VMSTAT_PGSKIP_DMA32},
    {"pgsteal_anon", Vmstat::VMSTAT_PGSTEAL_ANON},
    {"pgsteal_file", Vmstat::VMSTAT_PGSTEAL_FILE},
    {"thp_collapse_alloc", Vmstat::VMSTAT_THP_COLLAPSE_ALLOC},
    {"thp_collapse_alloc_failed", Vmstat::VMSTAT_THP_COLLAPSE_ALLOC_FAILED},
    {"thp_deferred_split_page", Vmstat::VMSTAT_THP_DEFERRED_SPLIT_PAGE},
    {"thp_fault_alloc", Vmstat::VMSTAT_THP_FAULT_ALLOC},
    {"thp_fault_fallback", Vmstat::VMSTAT_THP_FAULT_FALLBACK},
    {"thp_fault_fallback_charge", Vmstat::VMSTAT_THP_FAULT_FALLBACK_CHARGE},
    {"thp_file_alloc", Vmstat::VMSTAT_THP_FILE_ALLOC},
    {"thp_file_fallback", Vmstat::VMSTAT_THP_FILE_FALLBACK},
    {"thp_file_fallback_charge", Vmstat::VMSTAT_THP_FILE_FALLBACK_CHARGE},
    {"thp_file_mapped", Vmstat::VMSTAT_THP_FILE_MAPPED},
    {"thp_migration_fail", Vmstat::VMSTAT_THP_MIGRATION_FAIL},
    {"thp_migration_split", Vmstat::VMSTAT_THP_MIGRATION_SPLIT},
    {"thp_migration_success", Vmstat::VMSTAT_THP_MIGRATION_SUCCESS},
    {"thp_scan_exceed_none_pte", Vmstat::VMSTAT_THP_SCAN_EXCEED_NONE_PTE},
    {"thp_scan_exceed_share_pte", Vmstat::VMSTAT_THP_SCAN_EXCEED_SHARE_PTE},
    {"thp_scan_exceed_swap_pte", Vmstat::VMSTAT_THP_SCAN_EXCEED_SWAP_PTE},
    {"thp_split_page", Vmstat::VMSTAT_THP_SPLIT_PAGE},
    {"thp_split_page_failed", Vmstat::VMSTAT_THP_SPLIT_PAGE_FAILED},
    {"thp_split_pmd", Vmstat::VMSTAT_THP_SPLIT_PMD},
    {"thp_swpout", Vmstat::VMSTAT_THP_SWPOUT},
    {"thp_swpout_fallback", Vmstat::VMSTAT_THP_SWPOUT_FALLBACK},
    {"thp_zero_page_alloc", Vmstat::VMSTAT_THP_ZERO_PAGE_ALLOC},
    {"thp_zero_page_alloc_failed", Vmstat::VMSTAT_THP_ZERO_PAGE_ALLOC_FAILED},
    {"vma_lock_abort", Vmstat::VMSTAT_VMA_LOCK_ABORT},
    {"vma_lock_miss", Vmstat::VMSTAT_VMA_LOCK_MISS},
    {"vma_lock_retry", Vmstat::VMSTAT_VMA_LOCK_RETRY},
    {"vma_lock_success", Vmstat::VMSTAT_VMA_LOCK_SUCCESS},
    {"workingset_activate_anon", Vmstat::VMSTAT_WORKINGSET_ACTIVATE_ANON},
    {"workingset_activate_file", Vmstat::VMSTAT_WORKINGSET_ACTIVATE_FILE},
    {"workingset_nodes", Vmstat::VMSTAT_WORKINGSET_NODES},
    {"workingset_refault_anon", Vmstat::VMSTAT_WORKINGSET_REFAULT_ANON},
    {"workingset_refault_file", Vmstat::VMSTAT_WORKINGSET_REFAULT_FILE},
    {"workingset_restore_anon", Vmstat::VMSTAT_WORKINGSET_RESTORE_ANON},
    {"workingset_restore_file", Vmstat::VMSTAT_WORKINGSET_RESTORE_FILE},
};

template <typename Enum, size_t N>
constexpr uint32_t Limit(const CounterName<Enum> (&table)[N]) {
  uint32_t limit = 0;
  for (const CounterName<Enum>& entry : table) {
    const auto value = static_cast<uint32_t>(entry.counter);
    limit = value + 1 > limit ? value + 1 : limit;
  }
  return limit;
}
static_assert(Limit(kMeminfo) == kMeminfoCounterLimit, "kMeminfoCounterLimit");
static_assert(Limit(kVmstat) == kVmstatCounterLimit, "kVmstatCounterLimit");

// Key -> counter, built once (a poll looks up every line of its file).
template <typename Enum, size_t N>
class KeyIndex {
 public:
  explicit KeyIndex(const CounterName<Enum> (&table)[N]) {
    for (const CounterName<Enum>& entry : table)
      map_.emplace(entry.key, entry.counter);
  }
  bool Find(std::string_view key, Enum* out) const {
    auto it = map_.find(key);
    if (it == map_.end())
      return false;
    *out = it->second;
    return true;
  }

 private:
  std::unordered_map<std::string_view, Enum> map_;
};

}  // namespace

const CounterName<MeminfoCounter>* MeminfoCounterNames(size_t* count) {
  *count = sizeof(kMeminfo) / sizeof(kMeminfo[0]);
  return kMeminfo;
}

const CounterName<VmstatCounter>* VmstatCounterNames(size_t* count) {
  *count = sizeof(kVmstat) / sizeof(kVmstat[0]);
  return kVmstat;
}

bool MeminfoCounterForKey(std::string_view key, MeminfoCounter* out) {
  static const KeyIndex<Meminfo, sizeof(kMeminfo) / sizeof(kMeminfo[0])> index(
      kMeminfo);
  return index.Find(key, out);
}

bool VmstatCounterForKey(std::string_view key, VmstatCounter* out) {
  static const KeyIndex<Vmstat, sizeof(kVmstat) / sizeof(kVmstat[0])> index(
      kVmstat);
  return index.Find(key, out);
}

}  // namespace probes
}  // namespace ringtrace
