/*
 * Copyright (C) 2026 The ringtrace authors.
 *
 * Promela model of the shared ring chunk protocol, as implemented with
 * per-packet publication. Checked by spin (tools/check-model). Every
 * process, inline, label and variable is mapped to the code and to the spec
 * (docs/ring-protocol.md) in
 * docs/ring-model.md; the names below follow the code.
 *
 * Abstractions (see docs/ring-model.md for the full list):
 *   - a packet is one fragment; its payload is its packet id (1 byte), stored
 *     in the chunk's fragment slot. Sizes and the directory are not modelled.
 *   - positions are PBITS-bit numbers, wrap counts WBITS-bit (the 32-bit
 *     position and the 29-bit wrap mask, scaled down: section 9 identity).
 *   - memory is sequentially consistent, except for the two stores the
 *     writer-wait protocol orders with fences (the reader's read_pos store
 *     and the writer's num_writers_waiting increment), which go through
 *     modelled store buffers (process Memory) when STALL is set.
 *
 * Configuration (spin -D...): NCH, CBITS (log2 NCH), WBITS, PBITS, NW, NPKT,
 * MAXF, CLAIM_BUDGET, MAXRELOC, RETRY_BUDGET, STALL, STALL_WAITS, FLUSH_OPEN,
 * DIE. Seeded bugs: BUG_* (docs/ring-model.md, "Seeded bugs").
 */

/* ---------------------------------------------------------------- sizes */
#ifndef NCH
#define NCH 2
#endif
#ifndef CBITS
#define CBITS 1
#endif
#ifndef WBITS
#define WBITS 2
#endif
#ifndef PBITS
#define PBITS 3
#endif
#ifndef NW
#define NW 2
#endif
#ifndef NPKT
#define NPKT 2
#endif
#ifndef MAXF
#define MAXF 2
#endif
#ifndef CLAIM_BUDGET
#define CLAIM_BUDGET 2
#endif
#ifndef MAXRELOC
#define MAXRELOC 1
#endif
#ifndef RETRY_BUDGET
#define RETRY_BUDGET 1
#endif
#ifndef STALL
#define STALL 0
#endif
#ifndef STALL_WAITS
#define STALL_WAITS 2
#endif
#ifndef FLUSH_OPEN
#define FLUSH_OPEN 1
#endif
#ifndef DIE
#define DIE 0
#endif

#define PMASK ((1 << PBITS) - 1)
#define WMASK ((1 << WBITS) - 1)
/* Section 9: identity period = min(NCH * 2^WBITS, 2^PBITS). */
#if (CBITS + WBITS) < PBITS
#define PERIOD (NCH << WBITS)
#else
#define PERIOD (1 << PBITS)
#endif

/* ------------------------------------------- state word (spec 3.2, ABI) */
/* Scaled-down layout of the 32-bit word: state:3 | flags:4 | n:4 | wid:4.
 * FreeForWrap carries the wrap count in the low bits. */
#define ST_FREE 0
#define ST_ACQ 1
#define ST_COMP 2
#define ST_RR 3
#define ST_ACK 4
#define F_DL 1  /* kFlagDataLoss (bit 24) */
#define F_CON 2 /* kFlagContinuesOnNext (bit 25): never set, see docs */
#define F_CFP 4 /* kFlagContinuesFromPrev (bit 26): never set, see docs */

#define MKDATA(st, fl, n, id) (((st) << 12) | ((fl) << 8) | ((n) << 4) | (id))
#define GSTATE(w) ((w) >> 12)
#define GFLAGS(w) (((w) >> 8) & 15)
#define GNUM(w) (((w) >> 4) & 15)
#define GWID(w) ((w) & 15)
#define GWRAP(w) ((w) & 4095)
#define WITHST(w, st) (((w) & 4095) | ((st) << 12))
#define ACKW (ST_ACK << 12)

/* Spec 4.2. The seeded spec 2.1 bug drops the wrap count from Free. */
#define CI(p) ((p) & (NCH - 1))
#ifdef BUG_FREE_NO_WRAP
#define WRAP(p) 0
#else
#define WRAP(p) (((p) >> CBITS) & WMASK)
#endif
#define NEXTWRAP(p) WRAP(((p) + NCH) & PMASK)
#define DIST(wp, rp) (((wp) - (rp)) & PMASK)

/* Writer hold_ (ring_writer.h Hold). */
#define H_NONE 0
#define H_ACQ 1
#define H_CACHED 2

/* Ghost packet fate. */
#define FATE_PENDING 0
#define FATE_DELIVERED 1
#define FATE_LOST 2

/* Loss causes (ghost). */
#define C_DROP 1    /* Full / NoChunkAvailable / relocation bound, kDrop */
#define C_TIMEOUT 2 /* stall deadline passed */

/* -------------------------------------------------------- shared state */
short word[NCH];           /* chunk state words */
byte slot[NCH * MAXF];     /* fragment payloads: packet id + 1, 0 = none */
byte read_pos;             /* ring header read_pos (as seen by writers) */
byte write_pos;            /* ring header write_pos */
byte next_id = 1;          /* WriterIdAllocator::next_ */

/* Writer-wait protocol (ring_wait.h). */
byte nww;                  /* num_writers_waiting */
bool sleeping[NW];         /* queued in FUTEX_WAIT on read_pos */
byte sampled[NW];          /* the value it waits on */
bool rp_sb;                /* reader's read_pos store still buffered */
byte rp_sbv;               /* its value */
bool reg_sb[NW];           /* writer's registration still buffered */

/* Ghost state (not in the ABI). */
byte owner[NCH];           /* writer (me+1) that may touch the payload */
byte fate[NW * NPKT];
byte next_exp[NW];         /* reader: next packet expected per writer */
bool pend[NW];             /* between reserve and claim */
byte rpos[NW];             /* its reserved position */
bool stale[NW];            /* the reader resolved rpos[] already */
byte since[NW];            /* reservations by others since its reserve */
bool stale_claim;          /* a claim succeeded behind the reader (spec 9) */
byte nfin;                 /* writers finished or dead */
bool dead[NW];
bool anydead;
byte rp_priv;              /* RingReader::read_pos_ */
bool ridle;                /* reader idle (waiting for a notification) */
bool stores_since_wake;    /* reader stored read_pos since its last wake */
bool lost_wakeup;          /* set by the Monitor just before it fails */

#define BUMP_SINCE(x) if :: x != me && pend[x] && since[x] <= PERIOD - NCH -> since[x]++ :: else fi
#if NW > 2
#define BUMP_SINCE3 ; BUMP_SINCE(2)
#define WAKE3 ; sleeping[2] = 0
#else
#define BUMP_SINCE3
#define WAKE3
#endif
#if MAXF != 2
#error "the reader's copy is unrolled for MAXF == 2"
#endif

/* ---------------------------------------------------------- modelling
 * Each Promela step below performs at most one access to a shared ring
 * word (or one fragment slot), together with the private bookkeeping and
 * the ghost checks that go with it; the grouping does not hide any
 * interleaving of two shared accesses of the code. */

/* =====================================================================
 * Writer-wait protocol: ring_wait.cc WaitForReadPosChange (W1..W6).
 * Sets |moved|; !moved means the deadline passed. |smp| is a variable.
 * ===================================================================== */
/* Every call and every sleep spends one unit of the packet's stall
 * deadline |waits| (decision D7: the deadline is per packet). */
#define DEADLINE_ENTRY tmo = (waits == 0); waits = (tmo -> 0 : waits - 1)
inline stall_wait(smp) {
#ifdef BUG_WAIT_NO_FENCE
  /* Seeded bug: W3 runs before W1, i.e. the registration is not ordered
   * before the read_pos check. */
  atomic {
    DEADLINE_ENTRY;
    moved = (!tmo && read_pos != smp); sampled[me] = smp
  };
  if :: !moved && !tmo -> reg_sb[me] = 1 :: else fi;
#else
  atomic {
    DEADLINE_ENTRY;
    moved = 0; sampled[me] = smp;
    reg_sb[me] = 1 /* W1: fetch_add(relaxed), enters the store buffer */
  };
  /* W2: fence F_W: the registration is visible before the check */
  atomic { if :: reg_sb[me] -> nww++; reg_sb[me] = 0 :: else fi };
#endif
  do
  :: moved || tmo -> break
  :: else ->
    atomic {
      if
      :: read_pos != smp -> moved = 1 /* W3 */
      :: else ->
        if
        :: waits == 0 -> tmo = 1 /* the deadline has passed */
        :: else -> waits--
        fi
      fi
    };
    if
    :: moved || tmo -> skip
    :: else ->
      /* W4: FUTEX_WAIT compares read_pos with the sample atomically with
       * queueing the waiter; a changed word returns at once (EAGAIN). */
      atomic { if :: read_pos == smp -> sleeping[me] = 1 :: else fi };
      /* asleep until FUTEX_WAKE, or until the deadline passes */
      if
      :: !sleeping[me] -> skip /* woken, or EAGAIN: loop (W5) */
      :: atomic { sleeping[me] -> sleeping[me] = 0; tmo = 1 }
      fi
    fi
  od;
  /* W6: fetch_sub(relaxed) (after a pending increment, FIFO) */
  atomic {
    if :: reg_sb[me] -> reg_sb[me] = 0 :: else -> nww-- fi;
    sampled[me] = 0; tmo = 0
  }
}

/* =====================================================================
 * Writer: ring_writer.cc RingWriter, with per-packet publication.
 * ===================================================================== */

/* The writer holds no chunk: forget the handle (state-space reduction). */
#define FORGET_HANDLE pos = 0; myword = 0; published = 0; closed = 0; no_reuse = 0

/* RingWriter::RecordLoss [I6] (part of the step that decided the loss). */
inline record_loss(why) {
#if STALL
  /* Under the stall policy only a timeout loses data. */
  assert(why == C_TIMEOUT);
#endif
  /* Per-packet writer: a loss never finds a cached chunk, every
   * acquisition gives it up first (docs/ring-model.md, decision D5). */
  assert(hold != H_CACHED);
#ifndef BUG_LOSS_KEEPS_CACHE
  hold = (hold == H_CACHED -> H_NONE : hold);
  pending_loss = 1
#endif
}

inline lose_packet(pk) {
  assert(fate[me * NPKT + pk] == FATE_PENDING);
  fate[me * NPKT + pk] = FATE_LOST
}

#if DIE
/* The writer may stop here for good (crash, SIGKILL, never scheduled). */
inline maybe_die() {
  if
  :: !anydead -> atomic { anydead = 1; dead[me] = 1; nfin++ }; goto died
  :: skip
  fi
}
#else
inline maybe_die() { skip }
#endif

/* A payload access to chunk |ch|: only its one owner, only in the
 * unpublished part (append-only, spec 6.3), only while the word says
 * Acquired or RewriteRequested of this writer. */
inline check_access(ch, idx) {
  assert(owner[ch] == me + 1);
  assert(GSTATE(word[ch]) == ST_ACQ || GSTATE(word[ch]) == ST_RR);
  assert(GWID(word[ch]) == myid);
  assert(idx >= GNUM(word[ch]))
}

/* RingWriter::AcquireChunk + TryAcquireOnce (spec 4.3, 5.4): reserve once,
 * claim once. Sets |got|; on failure the loss is recorded. |wait_first|:
 * the relocation bound was reached under the stall policy, so the writer
 * waits for read_pos to move first. */
inline acquire_chunk(fl, wait_first) {
  atomic {
    got = 0; budget = CLAIM_BUDGET; cause = C_DROP;
    aflags = fl | (pending_loss -> F_DL : 0); moved = 1
  };
#if STALL
  if
  :: wait_first -> rp = read_pos; stall_wait(rp)
  :: else
  fi;
#endif
  do
  :: !moved -> cause = C_TIMEOUT; break
  :: moved ->
    /* load read_pos (acquire), load write_pos (relaxed), Full check and
     * the reservation CAS write_pos wp -> wp + 1 (relaxed), as one step
     * (decision D2 in docs/ring-model.md: a lost reservation race reserves
     * nothing and only repeats this step) */
    atomic {
      rp = read_pos; wp = write_pos;
      if
      :: DIST(wp, rp) >= NCH -> ok = 0 /* Full */
      :: else ->
        write_pos = (wp + 1) & PMASK; ok = 1;
        pend[me] = 1; rpos[me] = wp; stale[me] = 0; since[me] = 0;
        BUMP_SINCE(0); BUMP_SINCE(1) BUMP_SINCE3
      fi
    };
    if
    :: !ok -> /* Full */
#if STALL
      stall_wait(rp)
#else
      break
#endif
    :: else ->
      if
      :: ok ->
        maybe_die();
        /* claim: CAS FreeForWrap(wrap_count(w)) -> Acquired (acquire) */
        atomic {
          c = CI(wp);
          nw = MKDATA(ST_ACQ, aflags, 0, myid);
          ok = (word[c] == WRAP(wp));
          pend[me] = 0;
          if
          :: ok ->
            word[c] = nw;
            if
            :: stale[me] ->
              /* Spec 9: a claim behind the reader needs a whole identity
               * period minus NCH reservations by others. */
              stale_claim = 1;
              assert(since[me] >= PERIOD - NCH);
#ifdef SPEC9_TIGHT
              assert(since[me] > PERIOD - NCH);
#endif
            :: else
            fi;
            assert(owner[c] == 0); owner[c] = me + 1;
            hold = H_ACQ; pos = wp; myword = nw;
            published = 0; closed = 0; no_reuse = 0; pending_loss = 0;
            got = 1
          :: else ->
            budget-- /* burned: the position is a hole (4.3) */
          fi;
          stale[me] = 0; since[me] = 0; c = 0; nw = 0
        };
        if
        :: got -> break
        :: !got && budget == 0 ->
#if STALL && !defined(BUG_STALL_BUDGET_DROPS)
          /* under stall, no NoChunkAvailable: wait for read_pos to move */
          rp = read_pos;
          stall_wait(rp);
          budget = CLAIM_BUDGET
#else
          break /* NoChunkAvailable */
#endif
        :: else
        fi
      fi
    fi
  od;
  atomic {
    if
    :: !got -> record_loss(cause)
    :: else
    fi;
    rp = 0; wp = 0; budget = 0; cause = 0; aflags = 0; moved = 0
  }
}

/* RingWriter::Relocate (spec 7 steps 6-8). |returned|: the word the failed
 * CAS or the load returned; |had_open|: the open fragment (packet k) moves
 * too. Sets |rel|. */
#define R_RELOCATED 0
#define R_NOTHING 1
#define R_LOST 2
inline relocate(returned, had_open) {
  /* step 6: copy the unpublished finalized fragments and the open one to
   * private scratch (reads of this writer's own unpublished slots) */
  atomic {
    /* the only legal reason: RewriteRequested(us, published) */
    assert(returned == WITHST(myword, ST_RR));
    c = CI(pos);
    nfinal = closed - published;
    assert(nfinal <= 1);
    if
    :: nfinal == 1 -> check_access(c, published); cp = slot[c * MAXF + published]
    :: else -> cp = 0
    fi;
    if
    :: had_open -> check_access(c, closed); cpo = slot[c * MAXF + closed]
    :: else -> cpo = 0
    fi;
    /* 7.1: with n == 0 the suffix carries continues-from-prev, data-loss */
    sflags = (published == 0 -> (GFLAGS(myword) & (F_CFP | F_DL)) : 0);
    c = 0
  };
  maybe_die();
  /* step 7: CAS RewriteRequested -> Acknowledged (release) */
  atomic {
    c = CI(pos);
    assert(word[c] == returned); /* only this writer leaves it */
    word[c] = ACKW; owner[c] = 0;
    hold = H_NONE; FORGET_HANDLE;
    reloc = (reloc > MAXRELOC -> reloc : reloc + 1); c = 0; exp = 0
  };
  if
  :: nfinal == 0 && !had_open -> rel = R_NOTHING
  :: else ->
    /* step 8: replacement or loss, bounded per packet */
    got = 0;
#ifndef BUG_UNBOUNDED_RELOC
    if
    :: reloc > MAXRELOC ->
#if STALL
      /* under stall the bound waits for read_pos instead of dropping */
      acquire_chunk(sflags, 1)
#else
      atomic { record_loss(C_DROP) }
#endif
    :: else -> acquire_chunk(sflags, 0)
    fi;
#else
    acquire_chunk(sflags, 0);
#endif
    if
    :: !got ->
      /* 7.1: the suffix is dropped; the next chunk carries data-loss */
      atomic {
        if :: nfinal == 1 -> lose_packet(cp - 1 - me * NPKT) :: else fi;
        if :: had_open -> lose_packet(k) :: else fi;
        rel = R_LOST
      }
    :: got ->
      /* restore into the replacement, never reused (7.1) */
      atomic {
        c = CI(pos);
        if
        :: nfinal == 1 -> check_access(c, 0); slot[c * MAXF] = cp
        :: else
        fi;
        closed = nfinal;
        no_reuse = 1;
        if
        :: had_open -> check_access(c, closed); slot[c * MAXF + closed] = cpo
        :: else
        fi;
        rel = R_RELOCATED; c = 0
      }
    fi
  fi;
  atomic { cp = 0; cpo = 0; nfinal = 0; sflags = 0 }
}

/* EndPacket, per-packet publication: CAS Acquired(w, published) ->
 * Complete(w, closed) (release; acquire on failure), relocation on a
 * scrape, the chunk cached when reuse is legal. */
inline publish() {
  rel = R_RELOCATED;
  do
  :: rel != R_RELOCATED -> break
  :: else ->
    atomic {
      c = CI(pos);
      exp = myword;
      nw = MKDATA(ST_COMP, GFLAGS(myword), closed, myid);
      if
      :: word[c] == exp ->
        word[c] = nw;
        myword = nw;
        published = closed;
        hold = (!no_reuse && closed < MAXF -> H_CACHED : H_NONE);
        if :: hold == H_NONE -> FORGET_HANDLE :: else fi;
        rel = R_NOTHING; exp = 0
      :: else -> exp = word[c]
      fi;
      c = 0; nw = 0
    };
    if
    :: rel == R_RELOCATED -> relocate(exp, 0)
    :: else
    fi
  od
}

proctype Writer(byte me) {
  byte myid, k, hold, pos, published, closed, reloc, nfinal;
  byte c, rp, wp, budget, waits, cause, aflags, sflags, cp, cpo, rel;
  short myword, exp, nw;
  bool no_reuse, pending_loss, ok, got, moved, tmo;

  /* WriterIdAllocator::Allocate: one atomic RMW on next_ */
#ifdef BUG_DUP_WID
  myid = next_id; /* seeded bug: load and store, not one RMW */
  next_id = myid + 1;
#else
  atomic { myid = next_id; next_id++ };
#endif

  do
  :: k == NPKT -> break
  :: else ->
    /* ---- BeginPacket: reuse the cached chunk when legal ---- */
    assert(hold != H_ACQ);
    waits = STALL_WAITS; /* the packet's stall deadline */
    if
    :: hold == H_CACHED ->
      /* CAS Complete(w, n) -> Acquired(w, n) (relaxed) */
      atomic {
        c = CI(pos);
        nw = WITHST(myword, ST_ACQ);
        if
        :: word[c] == myword ->
          word[c] = nw; assert(owner[c] == me + 1);
          hold = H_ACQ; myword = nw
        :: else -> hold = H_NONE; FORGET_HANDLE /* the reader consumed it */
        fi;
        c = 0; nw = 0
      }
    :: else
    fi;
    if
    :: hold == H_NONE -> acquire_chunk(0, 0)
    :: else -> got = 1
    fi;
    if
    :: !got -> atomic { lose_packet(k) } /* open_packets_dropped */
    :: else ->
      /* OpenFragment and the encoder's writes */
      atomic {
        c = CI(pos);
        check_access(c, closed);
        slot[c * MAXF + closed] = me * NPKT + k + 1;
        c = 0
      };
      maybe_die(); /* stopped inside its fragment */
#if FLUSH_OPEN
      /* Flush() with the packet open: CheckScrape (acquire load) */
      if
      :: skip
      :: atomic {
           c = CI(pos); exp = word[c]; ok = (exp != myword); c = 0;
           if :: !ok -> exp = 0 :: else fi
         };
         if
         :: ok ->
           relocate(exp, 1);
           got = (rel != R_LOST) /* false: Flush() returned false */
         :: else
         fi
      fi;
#endif
      if
      :: got ->
        /* ---- EndPacket: CloseFragment, then publish ---- */
        closed++;
        publish()
      :: else
      fi
    fi;
    /* forget the locals of this call (keeps the state space small) */
    atomic {
      k++; reloc = 0; c = 0; rel = 0; exp = 0; nw = 0; ok = 0; got = 0;
      waits = 0
    }
  od;
  atomic { nfin++ };
died:
  skip
}

/* =====================================================================
 * Reader: ring_reader.cc RingReader::ReadOne, TakeDataChunk, Advance.
 * ===================================================================== */

#define MARK1(x, pp) if :: pend[x] && rpos[x] == pp -> stale[x] = 1 :: else fi
#if NW > 2
#define MARK3(pp) ; MARK1(2, pp)
#else
#define MARK3(pp)
#endif
/* Ghost: position |pp| is resolved; a writer still between reserving pp and
 * claiming it could only succeed behind the reader. */
inline mark_resolved(pp) {
  MARK1(0, pp); MARK1(1, pp) MARK3(pp)
}

/* ChunkConsumer::CommitChunk of copied fragment |ix| with the checks of
 * every delivery: exactly once, FIFO per writer, every loss reported by
 * the data-loss flag of the first chunk after it. */
inline emit1(ix, fl) {
  if
  :: ix < n ->
    assert(cpy[ix] != 0);
    wr = (cpy[ix] - 1) / NPKT;
    pk = (cpy[ix] - 1) % NPKT;
    /* FIFO: everything before it was lost, nothing is still outstanding */
    gap = (pk > next_exp[wr]);
    assert(stale_claim || pk >= next_exp[wr]);
    assert(stale_claim || pk < next_exp[wr] + 1 ||
           fate[wr * NPKT + next_exp[wr]] == FATE_LOST);
#if NPKT > 2
    assert(stale_claim || pk < next_exp[wr] + 2 ||
           fate[wr * NPKT + next_exp[wr] + 1] == FATE_LOST);
#endif
    /* exactly once: never delivered twice, never delivered and lost */
    assert(fate[wr * NPKT + pk] == FATE_PENDING);
    fate[wr * NPKT + pk] = FATE_DELIVERED;
    /* a loss is reported exactly on the first chunk after it */
    assert(stale_claim || gap == (ix == 0 && (fl & F_DL) != 0));
    next_exp[wr] = pk + 1
  :: else
  fi
}

#ifdef BUG_NO_WAKE
#define NO_WAKE && 0 /* seeded bug: the reader never wakes a writer */
#else
#define NO_WAKE
#endif
/* ring_wait.cc WakeStalledWriters (R2, R3), before the reader goes idle. */
inline wake_stalled_writers() {
#if STALL
#ifndef BUG_WAKE_NO_FENCE
  /* R2: fence F_R drains the read_pos store before the load below */
  atomic { if :: rp_sb -> read_pos = rp_sbv; rp_sb = 0; rp_sbv = 0 :: else fi };
#endif
  /* R3: load num_writers_waiting; FUTEX_WAKE(read_pos, all) if non-zero */
  atomic {
    if
    :: nww != 0 NO_WAKE -> sleeping[0] = 0; sleeping[1] = 0 WAKE3
    :: else
    fi;
    stores_since_wake = 0
  }
#else
  skip
#endif
}

/* The payload of a chunk handed to its next traversal is dead: forget it
 * (a state-space reduction; the next owner overwrites it). */
#define FORGET_SLOTS(ch) slot[(ch) * MAXF] = 0; slot[(ch) * MAXF + 1] = 0

#define RES_RETRY 0
#define RES_HOLE 1
#define RES_EMIT 2
#define RES_LATER 3

proctype Reader() {
  byte p, c, n, fails, wr, pk, res;
  short w, exp, nw;
  bool ok, scrape, gap;
  byte cpy[MAXF];

  do
  :: atomic {
       /* relaxed load of write_pos, then acquire load of the state word */
       write_pos != rp_priv ->
#if STALL
       /* the buffered read_pos store drains by the next ring access
        * (decision D9: the hazard window is store -> wake-up load) */
       if :: rp_sb -> read_pos = rp_sbv; rp_sb = 0; rp_sbv = 0 :: else fi;
#endif
       p = rp_priv; c = CI(p); w = word[c]
     };
    /* ---- ReadOne: dispatch on one snapshot, redispatch on CAS failure */
    do
    :: res != RES_RETRY -> break
    :: else ->
      if
      :: GSTATE(w) == ST_FREE ->
        /* FreeForWrap(cur) -> FreeForWrap(next) (release/acquire) */
        atomic {
          /* [R3 free-tag]: never a mismatch in an honest ring */
          assert(GWRAP(w) == WRAP(p));
          if
          :: word[c] == w ->
            word[c] = NEXTWRAP(p); mark_resolved(p);
            assert(owner[c] == 0); FORGET_SLOTS(c);
            res = RES_HOLE
          :: else -> exp = word[c]
          fi
        }
      :: GSTATE(w) == ST_ACQ || GSTATE(w) == ST_COMP ->
#ifdef BUG_READER_WAITS
        /* seeded bug: wait for the writer to publish instead of scraping */
        if :: GSTATE(w) == ST_ACQ -> (word[c] != w) :: else fi;
#endif
        /* copy the published prefix (Acquired) or every fragment
         * (Complete), then CAS Acquired -> RewriteRequested or
         * Complete -> FreeForWrap(next) (release/acquire); commit the copy
         * only if the CAS won */
        atomic {
          scrape = (GSTATE(w) == ST_ACQ);
          n = GNUM(w);
          assert(scrape || n > 0);
          cpy[0] = (n > 0 -> slot[c * MAXF] : 0);
          cpy[1] = (n > 1 -> slot[c * MAXF + 1] : 0);
          nw = (scrape -> WITHST(w, ST_RR) : NEXTWRAP(p));
          if
          :: word[c] == w ->
            word[c] = nw;
            if :: !scrape -> owner[c] = 0; FORGET_SLOTS(c) :: else fi;
            emit1(0, GFLAGS(w));
            emit1(1, GFLAGS(w));
            res = (n > 0 -> RES_EMIT : RES_HOLE)
          :: else -> exp = word[c]
          fi;
          n = 0; scrape = 0; nw = 0; cpy[0] = 0; cpy[1] = 0;
          wr = 0; pk = 0; gap = 0
        }
      :: GSTATE(w) == ST_RR -> res = RES_HOLE /* only its writer leaves it */
      :: GSTATE(w) == ST_ACK ->
        /* Acknowledged -> FreeForWrap(next) (acq_rel) */
        atomic {
          /* a failed Acknowledged reclaim is a protocol error */
          assert(word[c] == w);
          word[c] = NEXTWRAP(p);
          assert(owner[c] == 0); FORGET_SLOTS(c);
          res = RES_HOLE
        }
      :: else -> assert(0) /* reserved states never occur */
      fi;
      if
      :: res == RES_RETRY ->
        /* redispatch on the word the CAS returned, within the budget */
        w = exp;
        fails++;
        res = (fails > RETRY_BUDGET -> RES_LATER : RES_RETRY)
      :: else
      fi
    od;
    /* Advance: release store of read_pos (RetryLater leaves it) */
    atomic {
      if
      :: res == RES_HOLE || res == RES_EMIT ->
        rp_priv = (p + 1) & PMASK;
        mark_resolved(p);
#if STALL
        rp_sb = 1; rp_sbv = rp_priv; /* buffered release store */
        stores_since_wake = 1
#else
        read_pos = rp_priv
#endif
      :: else
      fi;
      /* forget the locals of this call */
      p = 0; c = 0; n = 0; fails = 0; wr = 0; pk = 0; res = 0;
      w = 0; exp = 0; nw = 0; ok = 0; scrape = 0; gap = 0;
      cpy[0] = 0; cpy[1] = 0
    }
  :: atomic { write_pos == rp_priv && nfin == NW } -> break /* all gone */
  :: atomic { write_pos == rp_priv && nfin != NW } ->
    /* end of the pass: wake stalled writers, then idle until notified */
#if STALL
    if :: stores_since_wake -> wake_stalled_writers() :: else fi;
#endif
    ridle = 1;
    (write_pos != rp_priv || nfin == NW);
    ridle = 0
  od;

  /* Every packet of a live writer was delivered or counted lost. */
  atomic {
    p = 0;
    do
    :: p < NW * NPKT ->
      assert(stale_claim || dead[p / NPKT] || fate[p] != FATE_PENDING);
      p++
    :: else -> break
    od
  }
}

#if STALL
/* Store buffers drain at any time (the two stores of the wait protocol). */
proctype Memory() {
end_mem:
  do
  :: atomic { rp_sb -> read_pos = rp_sbv; rp_sb = 0; rp_sbv = 0 }
  :: atomic { reg_sb[0] -> nww++; reg_sb[0] = 0 }
  :: atomic { reg_sb[1] -> nww++; reg_sb[1] = 0 }
#if NW > 2
  :: atomic { reg_sb[2] -> nww++; reg_sb[2] = 0 }
#endif
  od
}

/* No lost wake-up: the reader never idles, with nothing left to resolve,
 * while a writer sleeps on a read_pos value that has already changed. */
#if NW > 2
#define MOVED_SLEEPER ((sleeping[0] && read_pos != sampled[0]) || \
                       (sleeping[1] && read_pos != sampled[1]) || \
                       (sleeping[2] && read_pos != sampled[2]))
#else
#define MOVED_SLEEPER ((sleeping[0] && read_pos != sampled[0]) || \
                       (sleeping[1] && read_pos != sampled[1]))
#endif
proctype Monitor() {
end_mon:
  atomic {
    (ridle && write_pos == rp_priv && MOVED_SLEEPER) ->
    lost_wakeup = 1;
    assert(!lost_wakeup)
  }
}
#endif

init {
  atomic {
    run Writer(0);
    run Writer(1);
#if NW > 2
    run Writer(2);
#endif
    run Reader();
#if STALL
    run Memory();
    run Monitor();
#endif
  }
}
