/* SPDX-License-Identifier: MIT */
/*
 * tracebuf.pml - a Promela model of the rseq write protocol of one per-CPU
 * ring (docs/DESIGN.md; the mapping of each step to the code is in
 * model/README.md).  Checked exhaustively by model/check.sh.
 *
 * One CPU runs producer 0, producer 1 and a signal handler that nests an
 * append on producer 0's thread.  The CPU runs one of them at a time, and
 * the scheduler may switch at every step (Spin's interleaving).  A critical
 * section (cs) is aborted when anything else ran on the CPU since its
 * previous step (preemption, or the handler), and also spontaneously up to
 * ABORTS times (migration, a signal without handler): an abort leaves the
 * cs's stores in place, then the writer starts over.  Another CPU runs the
 * consumer (discard mode) or a snapshot (overwrite mode), whose steps
 * interleave freely with the producers' and never abort them.
 *
 * Units: a sub-buffer is S units; the packet header is 1 unit; a record is
 * 1 or 2 units (producer 1 writes 2-unit records: a record with its
 * tracebuf:thread escape).  Each unit of a record holds its event number, so
 * the consumer can check every unit it delivers against the position the
 * event was committed at (ghost commit_pos): no torn or stale record.
 *
 * Properties (assertions; plus Spin's invalid end states = deadlock):
 *   P1 written = delivered + counted lost, exactly (end of run; discard:
 *      lost_full, overwrite: lost_overwritten = events before the oldest
 *      retained packet), and the last packet's events_discarded = lost;
 *   P2 every delivered packet is closed (content_size written by the switch
 *      that closed it), carries its own sequence number, and every record in
 *      it was committed at exactly that position (no torn packet);
 *   P3 head never lands on a sub-buffer boundary (monitor process);
 *   P4 events_discarded never decreases along the delivered packets;
 *   P5 no deadlock: every process reaches its end;
 *   P6 the written count read with the two-version rule (st_end == head ?
 *      cnt_after : cnt_before, as tb_session_counters) is exact at every
 *      instant (monitor process).
 *
 * Build with -DOVERWRITE for overwrite mode with live snapshots.
 */

#define S 4            /* units per sub-buffer (header = unit 0) */
#define N 2            /* sub-buffers */
#define RING (S * N)
#ifndef ABORTS
#define ABORTS 2       /* spontaneous aborts (any cs step, any writer) */
#endif
#ifndef K0
#define K0 1           /* events of producer 0 (ids 1..K0) */
#endif
#define K1 1           /* events of producer 1 (2 units each) */
#ifndef NOHANDLER
#define KH 1           /* events of the signal handler */
#else
#define KH 0
#endif
#define NEV (K0 + K1 + KH)
#ifdef FLUSHER
#define NDONE 4        /* producers, handler (or its stand-in), flusher */
#else
#define NDONE 3
#endif
#define NOPOS 255

/* ---- shared memory: control block line 0 + counters + consumer tail ---- */
byte head, st_end;              /* st_end: head at which *_after is true */
byte cnt_after, cnt_before;     /* events committed (two versions) */
byte lost_full, lost_overwritten;
byte tail;                      /* consumer position (discard) */
/* ring: units of records, packet header fields, sub-buffer descriptors */
byte unit[RING];
byte hseq[N], hcontent[N], hdisc[N];      /* packet_seq_num, content_size, events_discarded */
byte dcnt_begin[N], dcnt_end[N], ddisc_begin[N];

/* ---- the CPU ---- */
byte cpu;                       /* _pid of the writer inside a cs, 0 = none */
byte killed;                    /* _pid of a writer whose cs the handler aborted */
bit inhandler;                  /* producer 0 is interrupted by its handler */
byte aborts = ABORTS;
byte p0pid;
bit p0done;

/* ---- ghosts ---- */
byte commit_pos[NEV + 1];       /* position each event was committed at */
byte esize[NEV + 1];            /* units of each event */
byte committed, lostcalls, done;
byte delivered, last_disc, torn;

/* P3: head is 0 (never written) or strictly inside a sub-buffer */
/* P6: the written count tb_session_counters() reads (two-version rule) is
 * exact at every instant */
active proctype monitor()
{
end:	atomic { !((head == 0 || head % S != 0) &&
		   (st_end == head -> cnt_after : cnt_before) == committed) -> assert(false) }
}

/*
 * Nobody else runs on the CPU during a cs without aborting it, so a cs is
 * modelled as holding the CPU (`cpu`): other writers of the CPU wait, the
 * other CPU (consumer, snapshot) interleaves with every store.  Any cs step
 * may be the abort point (preemption, migration, signal: up to ABORTS in a
 * run), which releases the CPU and leaves the stores done so far in place.
 * Producer 0 is frozen while its signal handler runs; the handler aborts
 * its cs (killed).
 */
#define RUNS (_pid != p0pid || !inhandler)
/* a step of a writer outside any cs */
#define STEP(stmt) atomic { cpu == 0 && RUNS -> stmt }
/* the first step of a cs (label 1 after the store of rseq_cs) */
#define CSB(stmt) atomic { cpu == 0 && RUNS -> cpu = _pid; stmt }
/* a later step of a cs: aborted, or done */
#define CS(stmt, ab) atomic { (cpu == _pid || killed == _pid) && RUNS -> \
	if \
	:: killed == _pid -> killed = 0; goto ab \
	:: killed != _pid && aborts > 0 -> aborts--; cpu = 0; goto ab \
	:: killed != _pid -> stmt \
	fi }

/* One append of event ev (sz units).  Labels are per proctype: this inline
 * is used once per proctype. */
inline append(ev, sz)
{
	byte h, h2, e1, e2, ca, cb, c, P, Q, qi, pi, ow, disc, tl, nh;
again:
	h = 0; c = 0; ow = 0; disc = 0; tl = 0; nh = 0;
	/* ---- cs 1: the fast append (tb_rseq_fast_append, labels A..I) ---- */
	/* A: on the CPU; B: head != 0 and st_end == head; C: tid (not
	 * modelled); D/E: timestamp (not modelled); F: fits strictly inside */
#ifndef BUG_BOUNDARY
	CSB(h = head; if :: h == 0 || st_end != h || h % S + sz >= S -> cpu = 0; goto slow :: else -> skip fi);
#else
	CSB(h = head; if :: h == 0 || st_end != h || h % S + sz > S -> cpu = 0; goto slow :: else -> skip fi); /* mutant */
#endif
	CS(unit[h % RING] = ev; if :: sz == 2 -> unit[(h + 1) % RING] = ev :: else -> skip fi, fa_abort); /* G */
	CS(c = cnt_after; cnt_before = c, fa_abort);           /* H: _before = true values */
#ifndef BUG_ORDER
	CS(st_end = h + sz, fa_abort);                         /* H: st_end = new head */
	CS(cnt_after = c + 1, fa_abort);                       /* H: _after */
#else
	CS(cnt_after = c + 1, fa_abort);                       /* mutant: _after before st_end */
	CS(st_end = h + sz, fa_abort);
#endif
	CS(head = h + sz; commit_pos[ev] = h; committed++; cpu = 0; goto fin, fa_abort); /* I: commit */
fa_abort:
	goto again;

slow:
	/* ---- tb_state_read(): seqlock-style, outside any cs ---- */
#ifdef FINE_READ
	STEP(h = head);
	STEP(e1 = st_end);
	STEP(ca = cnt_after);
	STEP(cb = cnt_before);
	STEP(e2 = st_end);
	STEP(h2 = head);
#else
	/* a successful seqlock read: the loads of one iteration that saw the
	 * same (head, st_end) twice; -DFINE_READ models each load */
	STEP(h = head; e1 = st_end; ca = cnt_after; cb = cnt_before; e2 = e1; h2 = h);
#endif
	if
	:: e1 != e2 || h != h2 -> goto slow
	:: else -> c = (e1 == h -> ca : cb)
	fi;
	if
	:: h != 0 && h % S + sz < S -> goto record         /* room_ok */
	:: else -> skip
	fi;

	/* ---- prepare_switch() ---- */
	P = h - h % S;
	Q = (h == 0 -> 0 : P + S);
	qi = (Q / S) % N;
	pi = (P / S) % N;
#ifndef OVERWRITE
	STEP(tl = tail);
	if
	:: Q - tl >= RING ->                                   /* TB_SW_FULL */
		CSB(lost_full++; lostcalls++; cpu = 0);         /* cs 3: counter add (the add is the commit) */
		goto fin
	:: else -> skip
	fi;
	ow = 0;
#else
	if
	:: Q >= RING ->
		STEP(ow = dcnt_begin[(qi + 1) % N]);             /* cnt_begin of the oldest retained */
		if :: ow > c -> ow = c :: else -> skip fi
	:: else -> STEP(ow = lost_overwritten)
	fi;
#endif
	STEP(disc = lost_full + ow);                           /* discarded_total() */
	nh = Q + 1;
	/* ---- cs 2: the generic commit (tb_rseq_commit) of the switch ---- */
	CSB(if :: head != h -> cpu = 0; goto again :: else -> skip fi);  /* A: head unchanged */
	/* C: copy the staged header of Q (content_size at 48 before seq at 64) */
	CS(hcontent[qi] = 0, gc_abort);
	CS(hseq[qi] = Q / S, gc_abort);
	CS(hdisc[qi] = disc, gc_abort);
	/* D: the store list, in order */
	if
	:: h != 0 ->
		CS(hcontent[pi] = h - P, gc_abort);             /* close P */
		CS(hdisc[pi] = disc, gc_abort);
		CS(dcnt_end[pi] = c, gc_abort)
	:: else -> skip
	fi;
	CS(dcnt_begin[qi] = c, gc_abort);
	CS(dcnt_end[qi] = c, gc_abort);
	CS(ddisc_begin[qi] = disc, gc_abort);
	CS(lost_overwritten = ow, gc_abort);
	CS(cnt_before = c, gc_abort);
	CS(st_end = nh, gc_abort);
	CS(cnt_after = c, gc_abort);
	CS(head = nh; cpu = 0; goto again, gc_abort);          /* E: commit; then append into Q */

record:
	/* ---- prepare_record() + cs 2 ---- */
	nh = h + sz;
	CSB(if :: head != h -> cpu = 0; goto again :: else -> skip fi);  /* A */
	CS(unit[h % RING] = ev; if :: sz == 2 -> unit[(h + 1) % RING] = ev :: else -> skip fi, gc_abort); /* C */
	CS(cnt_before = c, gc_abort);                          /* D: state ops */
	CS(st_end = nh, gc_abort);
	CS(cnt_after = c + 1, gc_abort);
	CS(head = nh; commit_pos[ev] = h; committed++; cpu = 0; goto fin, gc_abort); /* E: commit */
gc_abort:
	goto again;
fin:
	skip
}

proctype producer0()
{
	byte ev = 1;
	do
	:: ev <= K0 -> append(ev, 1); ev++
	:: else -> break
	od;
	atomic { p0done = 1; done++ }
}

proctype producer1()
{
	byte ev = K0 + 1;
	do
	:: ev <= K0 + K1 -> append(ev, 2); ev++
	:: else -> break
	od;
	done++
}

#ifdef FLUSHER
/*
 * The live period's flush (tb_ring_flush_live -> tb_switch_flush, src/ring/):
 * the flusher thread pinned to the producers' CPU closes the open packet
 * while they write, with the switch critical section of a producer (without
 * a record after it), at any moment (the policy, when to close, is not
 * modelled: every moment is tried).  It is one more writer of the CPU:
 * preempting a producer's cs aborts it, and its own cs may be aborted.
 * -DBUG_FLUSH_UNPINNED: the flusher runs on another CPU (not pinned, or
 * rseq's CPU check missing): its steps no longer hold the CPU, so they
 * interleave with a producer's cs and abort nothing.
 */
#ifndef BUG_FLUSH_UNPINNED
#define FCSB(stmt) CSB(stmt)
#define FCS(stmt, ab) CS(stmt, ab)
#define FREL cpu = 0
#else
#define FCSB(stmt) atomic { stmt }
#define FCS(stmt, ab) atomic { stmt }
#define FREL skip
#endif
proctype flusher()
{
	byte h, e1, ca, cb, c, P, Q, qi, pi, disc, dopen, tl, nh;
again:
	/* tb_state_read() (one successful seqlock iteration) */
	STEP(h = head; e1 = st_end; ca = cnt_after; cb = cnt_before);
	c = (e1 == h -> ca : cb);
	if :: h == 0 -> goto fin :: else -> skip fi;
	P = h - h % S;
	Q = P + S;
	qi = (Q / S) % N;
	pi = (P / S) % N;
	STEP(dopen = ddisc_begin[pi]);                         /* the opening loss total: from the descriptor */
	STEP(disc = lost_full);                                /* tb_state_losses() */
	if :: h % S <= 1 && disc == dopen -> goto fin :: else -> skip fi;  /* nothing new: untouched */
	STEP(tl = tail);
	if :: Q - tl >= RING -> goto fin :: else -> skip fi;   /* TB_SW_FULL: the drain first */
	nh = Q + 1;
	FCSB(if :: head != h -> FREL; goto again :: else -> skip fi);      /* A: head unchanged */
	FCS(hcontent[qi] = 0, fl_abort);
	FCS(hseq[qi] = Q / S, fl_abort);
	FCS(hdisc[qi] = disc, fl_abort);
	FCS(hcontent[pi] = h - P, fl_abort);                   /* close P */
	FCS(hdisc[pi] = disc, fl_abort);
	FCS(dcnt_end[pi] = c, fl_abort);
	FCS(dcnt_begin[qi] = c, fl_abort);
	FCS(dcnt_end[qi] = c, fl_abort);
	FCS(ddisc_begin[qi] = disc, fl_abort);
	FCS(cnt_before = c, fl_abort);
	FCS(st_end = nh, fl_abort);
	FCS(cnt_after = c, fl_abort);
	FCS(head = nh; FREL; goto fin, fl_abort);              /* E: commit */
fl_abort:
	goto again;
fin:
	done++
}
#endif

#ifndef NOHANDLER
/* The signal handler: interrupts producer 0 anywhere (while it runs), writes
 * one event on its thread, returns; producer 0's cs, if any, then aborts
 * (last != its pid).  Producer 1 may preempt the handler. */
proctype handler()
{
	/* the signal arrives at any step of producer 0 (or after it is done);
	 * if producer 0 is inside a cs, the kernel aborts that cs */
	atomic { (cpu == 0 || cpu == p0pid) && !inhandler ->
		if :: cpu == p0pid -> killed = p0pid; cpu = 0 :: else -> skip fi;
		inhandler = !p0done }
	append(K0 + K1 + 1, 1);
	atomic { inhandler = 0; done++ }
}
#endif

/* Walk a copied packet's records: every unit must belong to an event
 * committed at exactly that position (P2). */
inline check_records(pos, content)
{
	k = 1;
	do
	:: k < content ->
		v = buf[k];
		assert(v >= 1 && v <= NEV && commit_pos[v] == pos + k);
		k = k + esize[v];
		n++
	:: else -> break
	od;
	assert(k == content)
}

#ifndef OVERWRITE
/* ---- discard mode: tb_ring_ready / tb_ring_copy / tb_ring_release ---- */
proctype consumer()
{
	byte h, t, b, sq, cs, ds, k, v, n;
	byte buf[S];
	do
	:: atomic { (head >= tail + S && head - head % S != tail) -> h = head; t = tail }  /* ready (a futex wait when not) */
		b = (t / S) % N;
		atomic { sq = hseq[b]; cs = hcontent[b]; ds = hdisc[b] };
		d_step { k = 1; do :: k < S -> buf[k] = unit[(t + k) % RING]; k++ :: else -> break od };
		/* check_packet: the model has no corruption, so it must pass (P2) */
		assert(sq == t / S && cs >= 1 && cs < S);
		n = 0;
		check_records(t, cs);
		delivered = delivered + n;
		assert(ds >= last_disc);                          /* P4 */
		last_disc = ds;
		tail = t + S                                       /* release */
	:: atomic { done == NDONE && !(head >= tail + S && head - head % S != tail) } -> break
	od;
	/* end of run: flush the partial packet (tb_ring_flush: a switch on the
	 * CPU, nothing else runs now), drain it, check the accounting (P1) */
	skip;
	d_step {
		h = head;
		if
		:: h != 0 && (h % S > 1 || lost_full != ddisc_begin[(h / S) % N]) ->
			b = ((h - h % S) / S) % N;
			hcontent[b] = h % S;
			hdisc[b] = lost_full;
			v = ((h - h % S + S) / S) % N;
			hseq[v] = (h - h % S + S) / S;
			hcontent[v] = 0;
			hdisc[v] = lost_full;
			ddisc_begin[v] = lost_full;
			n = (st_end == h -> cnt_after : cnt_before);
			dcnt_end[b] = n;
			dcnt_begin[v] = n;
			dcnt_end[v] = n;
			cnt_before = n;
			st_end = h - h % S + S + 1;
			cnt_after = n;
			head = h - h % S + S + 1
		:: else -> skip
		fi
	}
	do
	:: atomic { (head >= tail + S && head - head % S != tail) -> h = head; t = tail }
		b = (t / S) % N;
		atomic { sq = hseq[b]; cs = hcontent[b]; ds = hdisc[b] };
		d_step { k = 1; do :: k < S -> buf[k] = unit[(t + k) % RING]; k++ :: else -> break od };
		assert(sq == t / S && cs >= 1 && cs < S);
		n = 0;
		check_records(t, cs);
		delivered = delivered + n;
		assert(ds >= last_disc);
		last_disc = ds;
		tail = t + S
	:: else -> break
	od;
	assert(committed + lostcalls == NEV);
	assert(delivered == committed && last_disc == lost_full);   /* P1 */
}
#else
/* ---- overwrite mode: tb_ring_snapshot (copy, then re-check seq and head) ---- */
inline snapshot(final)
{
	h = head;
	if
	:: h == 0 -> skip
	:: else ->
		cur = h - h % S;
		from = (cur > (N - 1) * S -> cur - (N - 1) * S : 0);
		P = from;
		do
		:: P <= cur ->
			b = (P / S) % N;
			bytes = (P == cur -> h - cur : S);
			atomic { cs = hcontent[b]; sq0 = hseq[b] };  /* memcpy of the packet: header ... */
			d_step { k = 1; do :: k < bytes -> buf[k] = unit[(P + k) % RING]; k++ :: else -> break od };  /* ... records */
			atomic { sq = hseq[b]; h2 = head };     /* re-check: seq and head */
			if
#ifndef BUG_NO_RECHECK
			:: sq != P / S || h2 >= P + RING -> torn++
#endif
			:: else ->
				if :: P == cur -> cs = bytes :: else -> skip fi;   /* partial: closed in the copy */
				if
				:: sq0 == P / S && cs >= 1 && cs < S ->   /* check_packet */
					n = 0;
					check_records(P, cs);     /* P2 */
					if :: final -> delivered = delivered + n :: else -> skip fi
				:: else -> torn++                 /* -EBADMSG: dropped and counted */
				fi
			fi;
			P = P + S
		:: else -> break
		od
	fi
}

proctype snapshotter()
{
	byte h, h2, cur, from, P, b, bytes, cs, sq, sq0, k, v, n;
	byte buf[S];
	/* one snapshot while the producers write: must never deliver a torn packet */
	snapshot(0);
	(done == NDONE);
	/* the final snapshot: everything retained is delivered (P1) */
	torn = 0;
	snapshot(1);
	assert(committed == NEV);
	assert(delivered + lost_overwritten == committed);
}
#endif

init
{
	byte i;
	atomic {
		i = 0;
		do :: i <= NEV -> commit_pos[i] = NOPOS; esize[i] = 1; i++ :: else -> break od;
		i = K0 + 1;
		do :: i <= K0 + K1 -> esize[i] = 2; i++ :: else -> break od;
		p0pid = run producer0();
		run producer1();
#ifndef NOHANDLER
		run handler();
#else
		done++;
#endif
#ifdef FLUSHER
		run flusher();
#endif
#ifndef OVERWRITE
		run consumer()
#else
		run snapshotter()
#endif
	}
}
