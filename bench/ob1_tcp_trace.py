#!/usr/bin/env python3
"""Open MPI's rendezvous handshakes, read from a packet capture of its TCP transport.

    bench/ob1_tcp_trace.py CAPTURE.pcap [--events]

Reads a capture of the link between two ranks (scripts/cluster.sh run --capture FILE, taken
on node 0), rebuilds each direction of the busiest TCP connection (Open MPI's BTL TCP opens
one per pair of ranks) and cuts it into BTL fragments. For every rendezvous (pml ob1's RNDV
header, then the receiver's answer — an ACK, after which FRAG headers carry the rest of
non-contiguous data, or a PUT, after which the sender writes contiguous data with the BTL's
put — and the data) it reports when the receiver's answer left, and whether the receiver
had sent bulk data of its own between the RNDV's arrival and that answer: then the answer
queued behind that data on the one connection, and the sender's data waited for the other
direction to drain.

--events lists every fragment: time (s from the first packet), direction (node 0's rank
is r0), pml header, BTL fragment size. Written from Open MPI 4.1's headers (BTL TCP's
8-byte fragment header; ob1's match, rendezvous, ack and frag headers); no other tool is
needed. Exit status 2 on a file it cannot read."""
import bisect
import struct
import sys

PML = {65: 'MATCH', 66: 'RNDV', 67: 'RGET', 68: 'ACK', 69: 'NACK', 70: 'FRAG', 71: 'GET', 72: 'PUT', 73: 'FIN'}


def packets(path):
    """(time, (src, sport, dst, dport), seq, payload) of every TCP segment with data."""
    with open(path, 'rb') as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError('not a pcap file (too short)')
    magic = struct.unpack('<I', data[:4])[0]
    if magic not in (0xa1b2c3d4, 0xa1b23c4d):
        raise ValueError('not a little-endian pcap file (write it with tcpdump -w)')
    scale = 1e-9 if magic == 0xa1b23c4d else 1e-6
    link = struct.unpack('<I', data[20:24])[0]
    off, out = 24, []
    while off + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack('<IIII', data[off:off + 16])
        p = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if link == 113:  # Linux cooked (tcpdump -i any)
            l2, proto = 16, struct.unpack('>H', p[14:16])[0]
        elif link == 276:  # Linux cooked v2
            l2, proto = 20, struct.unpack('>H', p[0:2])[0]
        elif link == 1:  # Ethernet
            l2, proto = 14, struct.unpack('>H', p[12:14])[0]
        else:
            raise ValueError('link type %d: capture on an Ethernet device or "any"' % link)
        if proto != 0x0800 or len(p) < l2 + 20:
            continue
        ip = p[l2:]
        if ip[9] != 6:
            continue
        ihl = (ip[0] & 15) * 4
        total = struct.unpack('>H', ip[2:4])[0]
        tcp = ip[ihl:total]
        sport, dport, seq = struct.unpack('>HHI', tcp[:8])
        payload = tcp[(tcp[12] >> 4) * 4:]
        if payload:
            key = ('.'.join(map(str, ip[12:16])), sport, '.'.join(map(str, ip[16:20])), dport)
            out.append((sec + frac * scale, key, seq, payload))
    return out


def stream(segments):
    """One direction's bytes in order (retransmissions dropped) and (offset, time) marks."""
    nxt, buf, marks, held = None, bytearray(), [], {}
    for t, seq, p in segments:
        if nxt is None:
            nxt = seq
        held[seq] = (t, p)
        progressed = True
        while progressed:
            progressed = False
            for s0 in sorted(held, key=lambda s: (s - nxt) & 0xffffffff):
                t0, p0 = held[s0]
                lead = (nxt - s0) & 0xffffffff
                if lead >= 0x80000000:  # starts after nxt: a hole, wait for it
                    break
                del held[s0]
                if lead < len(p0):
                    marks.append((len(buf), t0))
                    buf += p0[lead:]
                    nxt = (s0 + len(p0)) & 0xffffffff
                progressed = True
                break
    return bytes(buf), marks


def fragments(buf, marks):
    """(time, pml name, size, header bytes) of each BTL fragment; skips the connection's
    greeting (it has no BTL header) by looking for the first plausible one."""
    offs = [o for o, _ in marks]

    def at(o):
        return marks[max(0, bisect.bisect_right(offs, o) - 1)][1]

    out, o, synced = [], 0, False
    while o + 8 <= len(buf):
        _, kind, count, size = struct.unpack('<BBHI', buf[o:o + 8])
        if kind not in (1, 2, 3) or size > 1 << 26 or (not synced and (kind != 1 or buf[o + 8] not in PML)):
            if synced:
                raise ValueError('lost the fragment boundary at byte %d' % o)
            o += 1
            continue
        synced = True
        head = buf[o + 8:o + 8 + min(size, 48)] if kind == 1 else b''
        out.append((at(o), PML.get(head[0], str(head[0])) if head else 'type%d' % kind, size, head))
        o += 8 + size + (16 * count if kind != 1 else 0)
    return out


def main(argv):
    if len(argv) < 2 or argv[1] in ('-h', '--help'):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    try:
        pk = packets(argv[1])
    except (OSError, ValueError) as e:
        print('ob1_tcp_trace: %s: %s' % (argv[1], e), file=sys.stderr)
        return 2
    if not pk:
        print('ob1_tcp_trace: %s: no TCP data in the capture' % argv[1], file=sys.stderr)
        return 2
    volume = {}
    for _, k, _, p in pk:
        volume[k] = volume.get(k, 0) + len(p)
    a = max(volume, key=volume.get)
    b = (a[2], a[3], a[0], a[1])
    t0 = pk[0][0]
    # r0: the rank on node 0 (the capture's own address is the lower one, 10.97.0.1).
    lo = min(a[0], a[2])
    frags = []
    for key in (a, b):
        buf, marks = stream([(t, s, p) for t, k, s, p in pk if k == key])
        name = 'r0->r1' if key[0] == lo else 'r1->r0'
        try:
            cut = fragments(buf, marks)
        except ValueError as e:
            print('ob1_tcp_trace: %s: %s (%s): start the capture before the job, and capture whole '
                  'packets' % (argv[1], e, name), file=sys.stderr)
            return 2
        frags += [(t - t0, name, kind, size, head) for t, kind, size, head in cut]
    frags.sort(key=lambda f: f[0])
    if '--events' in argv:
        for t, d, kind, size, _ in frags:
            print('%10.6f %s %-5s %8d' % (t, d, kind, size))
    # Each RNDV (its sender's request at bytes 24..31) and the ACK that answers it (bytes 8..15).
    # The receiver answers a RNDV with an ACK (then the sender sends FRAGs: non-contiguous
    # data) or a PUT (then the sender writes the data with the BTL's put, fragments of type 2:
    # contiguous data); both name the sender's request at bytes 8..15. Requests are
    # recycled: the answer is the first one naming it after the RNDV.
    acks = {}
    for t, d, kind, _, head in frags:
        if kind in ('ACK', 'PUT') and len(head) >= 16:
            acks.setdefault((d, head[8:16]), []).append(t)
    rows, behind = [], 0
    for t, d, kind, _, head in frags:
        if kind != 'RNDV' or len(head) < 32:
            continue
        back = 'r1->r0' if d == 'r0->r1' else 'r0->r1'
        times = acks.get((back, head[24:32]), [])
        i = bisect.bisect_left(times, t)
        if i == len(times):
            continue
        ta = times[i]
        bulk = sum(1 for u, e, k, _, _ in frags if e == back and k in ('FRAG', 'type2') and t <= u < ta)
        behind += bulk > 0
        rows.append((t, d, ta - t, bulk))
    print('rendezvous messages: %d; answered after the receiver had sent bulk data of its '
          'own: %d' % (len(rows), behind))
    if rows:
        waits = sorted(r[2] for r in rows)
        print('RNDV to its answer: median %.3f ms, 90th percentile %.3f ms, max %.3f ms' %
              (1e3 * waits[len(waits) // 2], 1e3 * waits[int(len(waits) * 0.9)], 1e3 * waits[-1]))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
