"""The lab notes' own numbers (shared/seeds/000-004), copied as printed, to stand beside ours.

Each value cites where in its note it comes from; nothing here is measured.
"""

# 000 (Japanese): strace -c of measure1 (read/write) and measure2 (fread/fwrite); the input
# was 500,001 bytes (500,001 writes at buffer size 1).
N000_STRACE = {
    "measure1 b=8192": {"read": 64, "write": 63, "close": 4, "fstat": 3, "mmap": 5,
                        "mprotect": 4, "munmap": 1, "brk": 3, "access": 3, "execve": 1,
                        "arch_prctl": 1, "openat": 4},
    "measure2 b=8192": {"write": 123, "read": 65, "openat": 4, "mmap": 5, "execve": 1,
                        "mprotect": 4, "access": 3, "fstat": 5, "close": 4, "munmap": 1,
                        "brk": 3, "arch_prctl": 1},
    "measure1 b=1": {"write": 500001, "read": 500002, "openat": 4, "close": 4, "brk": 3,
                     "fstat": 3, "mmap": 5, "mprotect": 4, "munmap": 1, "access": 3,
                     "execve": 1, "arch_prctl": 1},
    "measure2 b=1": {"write": 124, "read": 125, "close": 4, "fstat": 5, "mmap": 5,
                     "mprotect": 4, "munmap": 1, "brk": 3, "access": 3, "execve": 1,
                     "arch_prctl": 1, "openat": 4},
    "measure2 b=1 _IONBF": {"write": 500001, "read": 500002, "close": 4, "fstat": 3,
                            "mmap": 5, "mprotect": 4, "munmap": 1, "brk": 3, "access": 3,
                            "execve": 1, "arch_prctl": 1, "openat": 4},
}
N000_TOTAL = {"measure1 b=8192": 156, "measure2 b=8192": 219, "measure1 b=1": 1000032,
              "measure2 b=1": 280, "measure2 b=1 _IONBF": 1000032}
N000_SECONDS = {"measure1 b=1": 0.638800306, "measure1 b=8192": 0.001700077,
                "measure2 b=1": 0.019733922, "measure2 b=8192": 0.001933187}

# 001 (English): tr2u/tr2b 1 a on 500,001 '1' characters, stdout to a file and to the
# terminal.
N001_STRACE = {
    "tr2b > file": {"read": 10, "mmap": 9, "mprotect": 4, "fstat": 4, "open": 2, "write": 8,
                    "munmap": 1, "access": 1, "close": 2, "execve": 1, "brk": 1,
                    "arch_prctl": 1},
    "tr2u > file": {"write": 500001, "read": 500003, "mprotect": 4, "mmap": 7, "open": 2,
                    "munmap": 1, "fstat": 2, "access": 1, "close": 2, "execve": 1, "brk": 1,
                    "arch_prctl": 1},
    "tr2u > tty": {"write": 500001, "read": 500003, "mmap": 7, "mprotect": 4, "execve": 1,
                   "open": 2, "munmap": 1, "fstat": 2, "close": 2, "access": 1, "brk": 1,
                   "arch_prctl": 1},
    "tr2b > tty": {"write": 489, "mmap": 9, "read": 10, "mprotect": 4, "fstat": 4, "open": 2,
                   "munmap": 1, "access": 1, "execve": 1, "close": 2, "brk": 1,
                   "arch_prctl": 1},
}
N001_TOTAL = {"tr2b > file": 44, "tr2u > file": 1000026, "tr2u > tty": 1000026,
              "tr2b > tty": 525}
N001_SECONDS = {"tr2b > file": 0.058, "tr2u > file": 0.590}

# 002 (Chinese): timewrite's clock time per BUFFSIZE ("时钟时间", seconds from times(), 10 ms
# ticks) and loop count, O_SYNC ("同步写入") and not ("异步写入"), per platform (appendix
# tables 2-11). WSL and VMware used 1,310,720 bytes (5120 loops at 256); FreeBSD and the
# Linux 2.6 server 131,072 bytes (512 loops).
N002_BUFFSIZES = [256 << i for i in range(10)]
N002_PLATFORMS = {
    "WSL Ubuntu 22.04, ext4": {
        "bytes": 1310720,
        "sync": [1.97, 0.87, 0.42, 0.10, 0.05, 0.03, 0.01, 0.01, 0.00, 0.01],
        "async": [1.82, 0.89, 0.44, 0.11, 0.05, 0.02, 0.02, 0.01, 0.00, 0.00]},
    "WSL Ubuntu 22.04, NTFS (/mnt)": {
        "bytes": 1310720,
        "sync": [1.67, 0.96, 0.59, 0.08, 0.06, 0.04, 0.01, 0.01, 0.01, 0.01],
        "async": [2.12, 1.22, 0.54, 0.10, 0.05, 0.03, 0.01, 0.01, 0.01, 0.00]},
    "VMware Ubuntu 22.04, ext4": {
        "bytes": 1310720,
        "sync": [3.58, 1.89, 0.79, 0.44, 0.26, 0.10, 0.07, 0.04, 0.03, 0.02],
        "async": [0.05, 0.03, 0.00, 0.01, 0.01, 0.00, 0.00, 0.00, 0.00, 0.00]},
    "VMware FreeBSD (GhostBSD), ZFS": {
        "bytes": 131072,
        "sync": [0.3594, 0.1641, 0.0859, 0.0469, 0.0156, 0.0156, 0.0078, 0.0, 0.0, 0.0],
        "async": [0.0] * 10},
    "course server, Linux 2.6, ext4": {
        "bytes": 131072,
        "sync": [20.58, 2.57, 1.31, 0.70, 0.35, 0.23, 0.12, 0.06, 0.05, 0.02],
        "async": [0.0] * 10},
}
# The platform closest to ours (a Linux VM writing to ext4), shown beside our ext4 rows.
N002_CLOSEST = "VMware Ubuntu 22.04, ext4"

# 003 (Japanese): go test -bench on an 804,335,663-byte file, darwin/amd64, Go of 2019.
# What it claimed, in our words: the opening of page 003, with Go or without.
N003_CLAIM = """**The note** (2019) benchmarked four ways to read an 804,335,663-byte file in Go on
darwin/amd64: a fixed 4 KiB buffer appended to a slice, `ioutil.ReadAll`, `ioutil.ReadFile`
and `io.ReadFull` into a buffer sized by `Stat`. ReadFile was 3.6× faster than ReadAll and
allocated 209 MB per call against 537 MB, because ReadFile sizes its buffer from the file
size once, while ReadAll starts at 512 bytes and grows (the note: doubling), copying as it
goes."""
N003_FILE_BYTES = 804335663
# ...but its B/op say otherwise: ReadFile (2019: a buffer of the file's size + 512) and
# ReadFull (exactly the file's size) allocated 209,305,932 and 209,305,966 bytes per call,
# so the file it measured was about 209.3 MB. Our benchmark row uses this size.
N003_BENCH_BYTES = 209305600
N003_BENCH = {  # ns/op, B/op, allocs/op
    "fixed": (363437901, 1293321805, 51),
    "readall": (171374293, 536869438, 23),
    "readfile": (47905628, 209305932, 5),
    "readfull": (44724078, 209305966, 5),
}

# 004 (Japanese): fincore -b after read-file -n 64m of 1 GiB files, read_ahead_kb 128 on an
# HGST HDD (sde1 xfs, sde2 ext4); test.file.1 read without advice, test.file.2 with -s.
N004_READ_BYTES = 64 << 20
N004_FILE_BYTES = 1 << 30
N004_READ_AHEAD_KB = 128
N004_RESIDENT = {("xfs", "NORMAL"): 67239936, ("xfs", "SEQUENTIAL"): 67502080,
                 ("ext4", "NORMAL"): 67239936, ("ext4", "SEQUENTIAL"): 67502080}
N004_MBPS = {("xfs", "NORMAL"): 169.832, ("xfs", "SEQUENTIAL"): 168.038,
             ("ext4", "SEQUENTIAL"): 157.850, ("ext4", "NORMAL"): 163.585}
