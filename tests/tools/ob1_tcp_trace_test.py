#!/usr/bin/env python3
"""bench/ob1_tcp_trace.py on captures written here, whose answers are known:
  - three rendezvous between r0 (10.97.0.1) and r1: r1's RNDV, then r0 streams a FRAG of
    its own message before it sends the ACK that answers r1 (behind bulk data); r0's RNDV,
    answered by r1 at once; r1's RNDV of contiguous data, answered by r0's PUT at once and
    followed by the BTL's put. A recycled request address (the same src_req in an ACK
    before the RNDV) must not be taken for the answer.
  - the TCP payload is cut at arbitrary points (headers span segments), one segment is
    retransmitted, and the connection starts with a greeting that has no BTL header.
  - a file that is not a capture: exit 2 with a message.
Usage: ob1_tcp_trace_test.py PATH/TO/ob1_tcp_trace.py WORKDIR"""
import os
import struct
import subprocess
import sys

tool, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)


def btl(pml):  # BTL TCP fragment: tag, type 1 (send), count, size; then the pml bytes
    return struct.pack('<BBHI', 65, 1, 0, len(pml)) + pml


def match_hdr(kind):
    return struct.pack('<BBHiiH', kind, 0, 0, 0, 7, 1) + b'\0\0'  # 16 bytes


def rndv(req, data):
    return btl(match_hdr(66) + struct.pack('<Q', 1 << 20) + req + data)


def ack(req):
    return btl(struct.pack('<BB6x', 68, 0) + req + b'\xaa' * 8 + struct.pack('<QQ', 0, 0))


def frag(req, data):
    return btl(struct.pack('<BB6xQ', 70, 0, 0) + req + b'\xbb' * 8 + data)


def put(req):  # pml PUT: the receiver asks the sender to write contiguous data
    return btl(struct.pack('<BBxxI', 72, 0, 1) + req + b'\xcc' * 16 + struct.pack('<QQQ', 0, 0, 0))


def btl_put(data):  # BTL TCP's put: header, one segment descriptor, the data
    return struct.pack('<BBHI', 65, 2, 1, len(data)) + b'\xdd' * 16 + data


A, B, C = b'\x11' * 8, b'\x22' * 8, b'\x33' * 8  # r1's, r0's and r1's send requests
r0_to_r1 = [(0.0005, ack(A)),  # an earlier message's answer, same address: not the answer
            (0.0100, frag(B, b'x' * 3000)),  # r0's bulk data, before it answers r1
            (0.0150, ack(A)),
            (0.0200, rndv(B, b'y' * 100)),
            (0.0310, put(C))]
r1_to_r0 = [(0.0000, b'greeting without a BTL header'),
            (0.0050, rndv(A, b'z' * 100)),
            (0.0210, ack(B)),
            (0.0300, rndv(C, b'w' * 50)),  # contiguous: answered by a PUT, data by the BTL's put
            (0.0320, btl_put(b'v' * 2000))]


def segments(chunks, cut):
    """(time, byte offset, payload) pieces of a stream, cut every `cut` bytes."""
    out, off = [], 0
    for t, data in chunks:
        for i in range(0, len(data), cut):
            out.append((t, off + i, data[i:i + cut]))
        off += len(data)
    return out


def packet(src, dst, sport, dport, seq, payload):
    tcp = struct.pack('>HHIIBBHHH', sport, dport, seq, 0, 5 << 4, 0x18, 65535, 0, 0)
    ip = struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + len(tcp) + len(payload), 0, 0, 64, 6, 0,
                     bytes(map(int, src.split('.'))), bytes(map(int, dst.split('.'))))
    eth = b'\x02' * 6 + b'\x04' * 6 + b'\x08\x00'
    return eth + ip + tcp + payload


recs = []
for t, off, p in segments(r0_to_r1, 700):
    recs.append((t, packet('10.97.0.1', '10.97.0.2', 40000, 1024, 1000 + off, p)))
seg = segments(r1_to_r0, 333)
for t, off, p in seg:
    recs.append((t, packet('10.97.0.2', '10.97.0.1', 1024, 40000, 5000 + off, p)))
t, off, p = seg[2]  # retransmitted later
recs.append((t + 0.001, packet('10.97.0.2', '10.97.0.1', 1024, 40000, 5000 + off, p)))
recs.sort(key=lambda r: r[0])
cap = os.path.join(work, 'synthetic.pcap')
with open(cap, 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for t, p in recs:
        f.write(struct.pack('<IIII', 1000, int(t * 1e6), len(p), len(p)) + p)

failures = 0


def expect(args, code, *texts):
    global failures
    r = subprocess.run([sys.executable, tool] + args, capture_output=True, text=True)
    out = r.stdout + r.stderr
    if r.returncode != code or any(x not in out for x in texts):
        print('FAILED: %s: exit %d (want %d), output:\n%s\nwanted: %s' % (args, r.returncode, code, out, texts))
        failures += 1
    return out


out = expect([cap, '--events'], 0,
             'rendezvous messages: 3; answered after the receiver had sent bulk data of its own: 1',
             'RNDV to its answer: median 1.000 ms')
events = [line.split()[2] for line in out.splitlines() if '->' in line]
if events != ['ACK', 'RNDV', 'FRAG', 'ACK', 'RNDV', 'ACK', 'RNDV', 'PUT', 'type2']:
    print('FAILED: --events lists the wrong fragments:\n' + out)
    failures += 1
bad = os.path.join(work, 'not_a_capture')
with open(bad, 'w') as f:
    f.write('hello, this is text\n' * 4)
expect([bad], 2, 'not a little-endian pcap file')
print('ob1_tcp_trace: ok' if failures == 0 else 'ob1_tcp_trace: %d failure(s)' % failures)
sys.exit(1 if failures else 0)
