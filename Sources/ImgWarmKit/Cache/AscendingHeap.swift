/// Brings the elements of a buffer to its front in ascending order, one at
/// a time, in place: a binary min-heap built over the buffer (O(n)), then
/// each `next` swaps the smallest remaining element to the next front slot.
///
/// Why not `sort`: the standard library's sort is a merge sort that takes a
/// scratch buffer of half the elements (2.7 MB for the trim of a million-file
/// cache, at the very moment every record is in memory), and the trim only
/// needs the oldest files up to the target, not a full order. The heap takes
/// no memory beyond the buffer and costs O(log n) per element taken.
///
/// The heap is stored back to front (heap position p is buffer index
/// count - 1 - p), so the element taken k-th lands at index k - 1 while the
/// heap shrinks from the front. Not stable: callers order ties themselves
/// (the pruner's comparison is total).
struct AscendingHeap<Element> {
    private let buffer: UnsafeMutableBufferPointer<Element>
    /// Elements still in the heap; the front `buffer.count - remaining` are
    /// the ones taken, in order.
    private(set) var remaining: Int

    /// Arranges `buffer` into the heap. `areInIncreasingOrder` must be a
    /// strict weak order, the same at every call.
    init(_ buffer: UnsafeMutableBufferPointer<Element>, by areInIncreasingOrder: (Element, Element) -> Bool) {
        self.buffer = buffer
        remaining = buffer.count
        var position = remaining / 2
        while position > 0 {
            position -= 1
            siftDown(position, by: areInIncreasingOrder)
        }
    }

    /// Moves the smallest element left in the heap to the front slot after
    /// the ones taken before; returns that slot's index, nil when none is left.
    mutating func next(by areInIncreasingOrder: (Element, Element) -> Bool) -> Int? {
        guard remaining > 0 else { return nil }
        let slot = buffer.count - remaining
        // Root (position 0) out, last heap element (at `slot`) in its place.
        buffer.swapAt(index(0), slot)
        remaining -= 1
        siftDown(0, by: areInIncreasingOrder)
        return slot
    }

    private func index(_ position: Int) -> Int { buffer.count - 1 - position }

    private func siftDown(_ start: Int, by areInIncreasingOrder: (Element, Element) -> Bool) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < remaining else { return }
            var smallest = left
            let right = left + 1
            if right < remaining, areInIncreasingOrder(buffer[index(right)], buffer[index(left)]) { smallest = right }
            guard areInIncreasingOrder(buffer[index(smallest)], buffer[index(parent)]) else { return }
            buffer.swapAt(index(smallest), index(parent))
            parent = smallest
        }
    }
}
