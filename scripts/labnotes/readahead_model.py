"""The windows mm/readahead.c opens for one sequential reader, before and after the commit
that ends async windows on a folio-order boundary (Ryan Roberts, "mm/readahead: terminate
async readahead on natural boundary", Linux 6.17).

A model of page_cache_sync_ra()/page_cache_async_ra() for a read of `total` pages in
`req`-page read() calls from index 0 of a file bigger than the read, nothing cached: enough
to predict what lab note 004 saw with fincore and what we see. It leaves out what such a
read never meets (interleaved streams, cache hits, memory pressure, mmap).
"""


def init_ra_size(req, max_pages):
    """get_init_ra_size(): the first window of a read starting at index 0."""
    size = 1 << (req - 1).bit_length()  # roundup_pow_of_two
    if size <= max_pages // 32:
        return size * 4
    if size <= max_pages // 4:
        return size * 2
    return max_pages


def next_ra_size(cur, max_pages):
    """get_next_ra_size(): the ramp-up of every following window."""
    if cur < max_pages // 16:
        return 4 * cur
    if cur <= max_pages // 2:
        return 2 * cur
    return max_pages


def _trim_to_order(start, size, order, max_pages):
    """6.17's page_cache_async_ra(): the window's end is rounded down to a multiple of
    2^min(order, log2 of max_pages' lowest set bit), unless that would empty it."""
    align = 1 << min(order, (max_pages & -max_pages).bit_length() - 1)
    end = start + size
    aligned_end = end - end % align
    return size - (end - aligned_end) if aligned_end > start else size


def windows(max_pages, trim, req=16, total=16384, max_order=9):
    """[(start, size)] of the windows, the first one synchronous, the rest asynchronous."""
    start, size = 0, init_ra_size(req, max_pages)
    marker = start + size - (size - req if size > req else size >> 1)
    order = 0  # page_cache_sync_ra() resets ra->order
    out = [(start, size)]
    for pos in range(0, total, req):
        if not pos <= marker < pos + req:
            continue
        # The read reached the PG_readahead page: push the window forward and ramp it up.
        start += size
        size = max(size, next_ra_size(size, max_pages))
        if trim:
            order += 2
            size = _trim_to_order(start, size, order, max_pages)
            # page_cache_ra_order() stores the order it could use back in ra->order.
            order = min(order, size.bit_length() - 1, max_order)
        marker = start  # async_size = size: the mark is the window's first page
        out.append((start, size))
    return out


def resident_pages(max_pages, trim, req=16, total=16384):
    """Pages cached when the read ends: the end of the furthest window."""
    start, size = windows(max_pages, trim, req, total)[-1]
    return start + size


if __name__ == "__main__":
    for ra_pages, name in ((32, "NORMAL"), (64, "SEQUENTIAL")):
        for trim in (False, True):
            extra = (resident_pages(ra_pages, trim) - 16384) * 4
            print(f"{name:10} {'6.17+' if trim else 'before'}: +{extra} KiB")
