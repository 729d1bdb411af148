/* SPDX-License-Identifier: MIT */
#include "session/layout.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static int align_up(uint64_t v, uint64_t a, uint64_t *out)
{
	if (v > UINT64_MAX - (a - 1))
		return -1;
	*out = (v + a - 1) & ~(a - 1);
	return 0;
}

/* Hard bound on a session file: 1 TiB. */
#define TB_MAX_FILE (1ull << 40)

int tb_layout_compute(const struct tb_layout_params *p, struct tb_layout *l)
{
	memset(l, 0, sizeof *l);
	if (!is_pow2(p->page_size) || p->page_size < 4096 || p->page_size > 65536)
		return tb_fail(-EINVAL, "page size %u is not a power of two in 4096..65536", p->page_size);
	if (p->ncpus < 1 || p->ncpus > TB_MAX_CPUS)
		return tb_fail(-EINVAL, "CPU count %u outside 1..%u", p->ncpus, TB_MAX_CPUS);
	if (p->nchannels < 1 || p->nchannels > TB_MAX_CHANNELS)
		return tb_fail(-EINVAL, "channel count %u outside 1..%u", p->nchannels, TB_MAX_CHANNELS);
	if (p->max_events < 2 || p->max_events > TB_MAX_EVENTS)
		return tb_fail(-EINVAL, "registry capacity %u outside 2..%u", p->max_events, TB_MAX_EVENTS);
	uint64_t off = sizeof(struct tb_map);
	l->chan_off = off;
	off += (uint64_t)p->nchannels * sizeof(struct tb_chan_desc);
	align_up(off, 256, &l->ctl_off);
	off = l->ctl_off + (uint64_t)p->nchannels * p->ncpus * sizeof(struct tb_ctl);
	align_up(off, 64, &l->ring_table_off);
	off = l->ring_table_off + (uint64_t)p->nchannels * p->ncpus * sizeof(uint64_t);
	align_up(off, 64, &l->reg_off);
	off = l->reg_off + sizeof(struct tb_registry) + (uint64_t)p->max_events * sizeof(struct tb_event_desc);
	align_up(off, 64, &l->proc_off);
	off = l->proc_off + sizeof(struct tb_proc_table) + (uint64_t)TB_MAX_PROCS * sizeof(struct tb_proc_entry);
	align_up(off, p->page_size, &l->rings_off);
	off = l->rings_off;
	for (unsigned c = 0; c < p->nchannels; c++) {
		uint64_t sb = p->sb_size[c], n = p->sb_count[c];
		if (!is_pow2(sb) || sb < p->page_size || sb > TB_MAX_SB_SIZE)
			return tb_fail(-EINVAL,
				       "sub-buffer size %" PRIu64 " of channel %u must be a power of two from the page size (%u) to %u",
				       sb, c, p->page_size, TB_MAX_SB_SIZE);
		if (!is_pow2(n) || n < TB_MIN_SB_COUNT || n > TB_MAX_SB_COUNT)
			return tb_fail(-EINVAL, "sub-buffer count %" PRIu64 " of channel %u must be a power of two in %u..%u",
				       n, c, TB_MIN_SB_COUNT, TB_MAX_SB_COUNT);
		uint64_t desc = 0;
		align_up(n * sizeof(struct tb_sbdesc), p->page_size, &desc);
		l->data_off[c] = desc;
		uint64_t data = sb * n; /* <= 2^28 * 2^16: no overflow */
		l->ring_size[c] = desc + data;
		unsigned __int128 all = (unsigned __int128)l->ring_size[c] * p->ncpus;
		if (all > TB_MAX_FILE || off + (uint64_t)all > TB_MAX_FILE)
			return tb_fail(-EFBIG, "rings of channel %u need %" PRIu64 " MiB per CPU x %u CPUs: over the 1 TiB bound",
				       c, l->ring_size[c] >> 20, p->ncpus);
		off += (uint64_t)all;
	}
	l->file_size = off;
	return 0;
}

int tb_valid_chan_name(const char *name, size_t cap)
{
	size_t n = 0;
	while (n < cap && name[n]) {
		char ch = name[n];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
		      ch == '-'))
			return 0;
		n++;
	}
	return n > 0 && n < cap;
}

int tb_map_validate(uint8_t *base, uint64_t size, struct tb_session *s)
{
	if (size < sizeof(struct tb_map))
		return tb_fail(-EBADMSG, "session file is %" PRIu64 " bytes, smaller than its %zu-byte header", size,
			       sizeof(struct tb_map));
	/* Copy the header once: every decision below is made on the copy, so
	 * a concurrent writer cannot change a value between check and use. */
	struct tb_map m;
	memcpy(&m, base, sizeof m);
	if (m.magic != TB_MAP_MAGIC)
		return tb_fail(-EBADMSG, "not a tracebuf session: magic 0x%016" PRIx64 ", expected 0x%016llx", m.magic,
			       (unsigned long long)TB_MAP_MAGIC);
	if (m.version != TB_FORMAT_VERSION)
		return tb_fail(-EPROTO, "session format version %u, this tracebuf reads version %u", m.version,
			       TB_FORMAT_VERSION);
	if (m.hdr_size != sizeof(struct tb_map))
		return tb_fail(-EBADMSG, "header size %u, expected %zu", m.hdr_size, sizeof(struct tb_map));
	if (m.protocol != TB_PROTO_RSEQ && m.protocol != TB_PROTO_FALLBACK)
		return tb_fail(-EBADMSG, "unknown write protocol %u", m.protocol);
	if (m.clock_kind != TB_CLOCK_TSC && m.clock_kind != TB_CLOCK_MONOTONIC)
		return tb_fail(-EBADMSG, "unknown clock kind %u", m.clock_kind);
	if (m.clock_freq < 1000000ull || m.clock_freq > 100000000000ull)
		return tb_fail(-EBADMSG, "clock frequency %" PRIu64 " Hz outside 1 MHz..100 GHz", m.clock_freq);
	if (m.file_size != size)
		return tb_fail(-EBADMSG, "header says the file is %" PRIu64 " bytes, it is %" PRIu64, m.file_size, size);
	if (m.nchannels < 1 || m.nchannels > TB_MAX_CHANNELS)
		return tb_fail(-EBADMSG, "channel count %u outside 1..%u", m.nchannels, TB_MAX_CHANNELS);
	if (m.chan_off != sizeof(struct tb_map))
		return tb_fail(-EBADMSG, "channel table at %" PRIu64 ", expected %zu", m.chan_off, sizeof(struct tb_map));
	if (size < m.chan_off + (uint64_t)m.nchannels * sizeof(struct tb_chan_desc))
		return tb_fail(-EBADMSG, "file too small for %u channel descriptors", m.nchannels);

	struct tb_layout_params p;
	memset(&p, 0, sizeof p);
	p.page_size = m.page_size;
	p.ncpus = m.ncpus;
	p.nchannels = m.nchannels;
	struct tb_chan_desc cd[TB_MAX_CHANNELS];
	memcpy(cd, base + m.chan_off, (size_t)m.nchannels * sizeof cd[0]);
	for (unsigned c = 0; c < m.nchannels; c++) {
		p.sb_size[c] = cd[c].sb_size;
		p.sb_count[c] = cd[c].sb_count;
		if (!tb_valid_chan_name(cd[c].name, sizeof cd[c].name))
			return tb_fail(-EBADMSG, "channel %u: name is not [A-Za-z0-9_-]{1,31}", c);
		if (cd[c].mode < TB_MODE_DISCARD || cd[c].mode > TB_MODE_BLOCK)
			return tb_fail(-EBADMSG, "channel %u: unknown mode %u", c, cd[c].mode);
		if (cd[c].attribution > TB_ATTR_ESCAPE)
			return tb_fail(-EBADMSG, "channel %u: unknown attribution %u", c, cd[c].attribution);
		if (cd[c].vtid > 1)
			return tb_fail(-EBADMSG, "channel %u: vtid %u is not 0 or 1", c, cd[c].vtid);
	}
	/* registry capacity is recovered from the gap between reg_off and proc_off */
	if (m.proc_off <= m.reg_off || m.reg_off >= size)
		return tb_fail(-EBADMSG, "registry/process table offsets %" PRIu64 "/%" PRIu64 " are inconsistent",
			       m.reg_off, m.proc_off);
	uint64_t reg_bytes = m.proc_off - m.reg_off;
	if (reg_bytes < sizeof(struct tb_registry))
		return tb_fail(-EBADMSG, "registry area of %" PRIu64 " bytes is too small", reg_bytes);
	p.max_events = (uint32_t)((reg_bytes - sizeof(struct tb_registry)) / sizeof(struct tb_event_desc));
	struct tb_layout l;
	int rc = tb_layout_compute(&p, &l);
	if (rc)
		return tb_fail(-EBADMSG, "session header describes an impossible layout");
	if (l.ctl_off != m.ctl_off || l.ring_table_off != m.ring_table_off || l.reg_off != m.reg_off ||
	    l.proc_off != m.proc_off || l.rings_off != m.rings_off || l.file_size != m.file_size)
		return tb_fail(-EBADMSG, "area offsets do not match the layout computed from the header (ctl %" PRIu64
					 ", rings %" PRIu64 ", size %" PRIu64 ")",
			       m.ctl_off, m.rings_off, m.file_size);
	for (unsigned c = 0; c < m.nchannels; c++)
		if (cd[c].ring_size != l.ring_size[c] || cd[c].data_off != l.data_off[c])
			return tb_fail(-EBADMSG, "channel %u: ring size/data offset do not match its sub-buffers", c);

	struct tb_registry *reg = (struct tb_registry *)(base + m.reg_off);
	if (reg->capacity != p.max_events)
		return tb_fail(-EBADMSG, "registry capacity %u, layout says %u", reg->capacity, p.max_events);
	struct tb_proc_table *pt = (struct tb_proc_table *)(base + m.proc_off);
	if (pt->capacity != TB_MAX_PROCS)
		return tb_fail(-EBADMSG, "process table capacity %u, expected %u", pt->capacity, TB_MAX_PROCS);

	/* the ring table must hold exactly the computed offsets */
	const uint64_t *rt = (const uint64_t *)(base + m.ring_table_off);
	for (unsigned c = 0; c < m.nchannels; c++)
		for (unsigned cpu = 0; cpu < m.ncpus; cpu++) {
			uint64_t want = tb_layout_ring_off(&p, &l, c, cpu);
			uint64_t got = rt[(uint64_t)c * m.ncpus + cpu];
			if (got != want)
				return tb_fail(-EBADMSG, "ring of channel %u CPU %u at offset %" PRIu64 ", expected %" PRIu64,
					       c, cpu, got, want);
		}

	s->base = base;
	s->size = size;
	s->map = (struct tb_map *)base;
	s->ncpus = m.ncpus;
	s->nchannels = m.nchannels;
	s->protocol = m.protocol;
	s->clock_kind = m.clock_kind;
	s->clock_freq = m.clock_freq;
	s->clock_offset_ns = m.clock_offset_ns;
	memcpy(s->uuid, m.uuid, 16);
	for (unsigned c = 0; c < m.nchannels; c++) {
		struct tb_chan_view *v = &s->chan[c];
		memcpy(v->name, cd[c].name, sizeof v->name);
		v->sb_size = cd[c].sb_size;
		v->sb_shift = (uint32_t)__builtin_ctzll(cd[c].sb_size);
		v->sb_count = cd[c].sb_count;
		v->ring_mask = cd[c].sb_size * cd[c].sb_count - 1;
		v->mode = cd[c].mode;
		v->attribution = cd[c].attribution;
		v->vtid = cd[c].vtid; /* 0 or 1, checked above on this same copy */
		v->max_payload = tb_chan_max_payload(cd[c].sb_size, v->vtid);
		v->watermark = cd[c].watermark ? cd[c].watermark : 1;
		if (v->watermark > v->sb_count)
			v->watermark = v->sb_count;
		/* timings from the map are clamped, not trusted: a hostile map
		 * must not make a block-mode producer wait for ever (docs/SECURITY.md) */
		v->block_timeout_ns = cd[c].block_timeout_ns < TB_MAX_BLOCK_TIMEOUT_NS ? cd[c].block_timeout_ns
										: TB_MAX_BLOCK_TIMEOUT_NS;
		v->flush_period_ns = cd[c].flush_period_ns ? cd[c].flush_period_ns : 1000000000ull;
		if (v->flush_period_ns > TB_MAX_FLUSH_PERIOD_NS)
			v->flush_period_ns = TB_MAX_FLUSH_PERIOD_NS;
		v->ring_size = l.ring_size[c];
		v->data_off = l.data_off[c];
		v->ring0_off = tb_layout_ring_off(&p, &l, c, 0);
	}
	s->ctl = (struct tb_ctl *)(base + m.ctl_off);
	s->reg = reg;
	s->reg_capacity = p.max_events;
	s->procs = pt;
	s->proc_capacity = TB_MAX_PROCS;
	return 0;
}
