#!/usr/bin/python3
"""Summarises a Nsight Compute SASS CSV (ncu --page source --csv --print-source sass): the
share of executed warp instructions and of stall samples by opcode, and the hottest address
ranges (runs of instructions between branch targets), to find where a kernel's instructions go.
Usage: sass_summary.py FILE.csv [--regions N] [--dump]"""
import csv
import sys


def main():
    path = sys.argv[1]
    nreg = int(sys.argv[sys.argv.index('--regions') + 1]) if '--regions' in sys.argv else 25
    rows = list(csv.reader(open(path)))
    head = next(i for i, r in enumerate(rows) if r and r[0] == 'Address')
    cols = rows[head]
    ia, isrc = cols.index('Address'), cols.index('Source')
    iex = cols.index('Instructions Executed')
    ist = cols.index('Warp Stall Sampling (All Samples)')
    reasons = [c for c in cols if c.startswith('stall_') and '(' not in c]
    ir = [cols.index(c) for c in reasons]
    rs = [0] * len(ir)
    ins = []
    for r in rows[head + 1:]:
        if len(r) > iex and r[ia].startswith('0x'):
            for k, i in enumerate(ir):
                rs[k] += int(r[i] or 0)
        if len(r) <= iex or not r[ia].startswith('0x'):
            continue
        ins.append((int(r[ia], 16), r[isrc].strip(), int(r[iex] or 0), int(r[ist] or 0)))
    tot = sum(i[2] for i in ins) or 1
    stot = sum(i[3] for i in ins) or 1
    print(f'{rows[0][1] if len(rows[0]) > 1 else ""}')
    print(f'warp instructions executed {tot}, stall samples {stot}, SASS instructions {len(ins)}')
    rt = sum(rs) or 1
    print('stall reasons (share of samples): ' + ', '.join(
        f'{c[6:]} {100 * v / rt:.1f}%' for c, v in sorted(zip(reasons, rs), key=lambda x: -x[1])
        if v / rt >= 0.01))
    by = {}
    for _, s, n, st in ins:
        op = s.split()[0] if s else '?'
        if op.startswith('@'):
            op = s.split()[1]
        op = op.split('.')[0]
        a = by.setdefault(op, [0, 0])
        a[0] += n
        a[1] += st
    print('\nopcode    share of instructions   share of stall samples')
    for op, (n, st) in sorted(by.items(), key=lambda kv: -kv[1][0])[:30]:
        print(f'{op:9s} {100 * n / tot:6.1f}%  {100 * st / stot:6.1f}%')
    # Regions: split where the execution count changes by more than 2x (loop bodies have one
    # count), report the hottest.
    regs = []
    cur = [ins[0]]
    for x in ins[1:]:
        p = cur[-1][2]
        if (p == 0) != (x[2] == 0) or (p and (x[2] > 2 * p or 2 * x[2] < p)):
            regs.append(cur)
            cur = [x]
        else:
            cur.append(x)
    regs.append(cur)
    regs.sort(key=lambda r: -sum(i[2] for i in r))
    print(f'\nhottest regions (start address offset, instructions, share, stall share, ops)')
    base = ins[0][0]
    for r in regs[:nreg]:
        n = sum(i[2] for i in r)
        st = sum(i[3] for i in r)
        ops = {}
        for i in r:
            o = i[1].split()[0]
            if o.startswith('@'):
                o = i[1].split()[1]
            o = o.split('.')[0]
            ops[o] = ops.get(o, 0) + 1
        top = ' '.join(f'{k}x{v}' for k, v in sorted(ops.items(), key=lambda kv: -kv[1])[:8])
        print(f'{r[0][0] - base:#07x} {len(r):4d} {100 * n / tot:5.1f}% {100 * st / stot:5.1f}%  '
              f'exec/instr {r[0][2]:>9d}  {top}')
    if '--dump' in sys.argv:
        print()
        for a, s, n, st in ins:
            print(f'{a - base:#07x} {n:>10d} {st:>6d}  {s}')


main()
