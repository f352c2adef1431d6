"""How fast memory reads back, just written against held idle for a while, on this VM.

    .venv/bin/python data/experiments/20261128-throughput-payload-ab/probe_idle_memory.py 10

Makes a private anonymous map of N GiB (the block-repeated fill the servers do) and reads it
twice (bytes() of each 4 MiB slice, as the Python server streams it); then the same in a
tmpfs file, read at once, after 30 s idle and after 90 s more. Prints GiB/s of each pass.
"""

import mmap
import os
import sys
import time

BLOCK = os.urandom(1 << 20)
CHUNK = 4 << 20
PATH = "/dev/shm/perflab-probe-idle-memory.bin"


def fill(payload: mmap.mmap, size: int) -> None:
    view = memoryview(payload)
    for offset in range(0, size, len(BLOCK)):
        view[offset : offset + len(BLOCK)] = BLOCK
    view.release()


def read_passes(payload: mmap.mmap, size: int, passes: int = 2) -> list[float]:
    view, speeds = memoryview(payload), []
    for _ in range(passes):
        began = time.perf_counter()
        for offset in range(0, size, CHUNK):
            bytes(view[offset : offset + CHUNK])
        speeds.append(round(size / (time.perf_counter() - began) / 2**30, 2))
    view.release()
    return speeds


def main() -> None:
    size = int(sys.argv[1]) << 30
    began = time.perf_counter()
    private = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE)
    fill(private, size)
    made_s = round(time.perf_counter() - began, 1)
    print(f"private anonymous, filled in {made_s} s: read GiB/s {read_passes(private, size)}")
    private.close()
    fd = os.open(PATH, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.posix_fallocate(fd, 0, size)
        written = mmap.mmap(fd, size, flags=mmap.MAP_SHARED | mmap.MAP_POPULATE)
        fill(written, size)
        written.close()
        for idle_s in (0, 30, 90):
            time.sleep(idle_s)
            kept = mmap.mmap(
                fd, size, flags=mmap.MAP_SHARED | mmap.MAP_POPULATE, prot=mmap.PROT_READ
            )
            print(f"tmpfs file after {idle_s} s more idle: read GiB/s {read_passes(kept, size)}")
            kept.close()
    finally:
        os.close(fd)
        os.unlink(PATH)


if __name__ == "__main__":
    main()
