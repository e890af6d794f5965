/// Brings the elements of a buffer to its front in ascending order, one at
/// a time, in place: an incremental quicksort (Paredes and Navarro, "Optimal
/// Incremental Sorting", 2006). Each `next` partitions only the part of the
/// buffer where the next smallest element is, keeping the pivots found on a
/// small stack, so taking k of n elements costs O(n + k log k) comparisons.
///
/// Why not `sort`: the standard library's sort is a merge sort that takes a
/// scratch buffer of half the elements (2.7 MB for the trim of a million-file
/// cache, at the very moment every record is in memory), and the trim only
/// needs the oldest files down to its target, not a full order. Why not a
/// heap, also in place: its sift-downs jump across the whole buffer; with a
/// million records (16 MB) that cost Nuke's full-cache trim a third more CPU
/// than the merge sort, where partitioning reads the buffer in order.
///
/// Not stable, and slow (quadratic) on many equal elements: callers order
/// ties themselves (the pruner's comparison is total).
struct IncrementalSort<Element> {
    private let buffer: UnsafeMutableBufferPointer<Element>
    /// Elements handed out so far: the front `taken` are in their final order.
    private(set) var taken = 0
    /// `[taken, sortedEnd)` is sorted and in place too.
    private var sortedEnd = 0
    /// Pivot positions above `taken`, innermost last: every element before
    /// a pivot is smaller than it, every element after it larger. The
    /// buffer's end stands at the bottom.
    private var bounds: [Int]

    /// Ranges this short are finished by insertion sort.
    private static var shortRange: Int { 16 }

    init(_ buffer: UnsafeMutableBufferPointer<Element>) {
        self.buffer = buffer
        bounds = [buffer.count]
    }

    /// Moves the smallest element not taken yet to the front slot after the
    /// ones taken before; returns that slot's index, nil when none is left.
    /// `areInIncreasingOrder` must be a strict weak order, the same at every call.
    mutating func next(by areInIncreasingOrder: (Element, Element) -> Bool) -> Int? {
        guard taken < buffer.count else { return nil }
        while taken == sortedEnd {
            let bound = bounds[bounds.count - 1]
            if bound - taken <= Self.shortRange {
                insertionSort(taken..<bound, by: areInIncreasingOrder)
                bounds.removeLast()
                // The pivot at `bound` is in its final place as well.
                sortedEnd = bound < buffer.count ? bound + 1 : bound
            } else {
                bounds.append(partition(taken..<bound, by: areInIncreasingOrder))
            }
        }
        taken += 1
        return taken - 1
    }

    /// Lomuto partition around the median of the first, middle and last
    /// elements; returns the pivot's final position.
    private func partition(_ range: Range<Int>, by areInIncreasingOrder: (Element, Element) -> Bool) -> Int {
        let last = range.upperBound - 1
        let middle = range.lowerBound + range.count / 2
        // Order first, middle, last; the median (now in the middle) goes last.
        if areInIncreasingOrder(buffer[middle], buffer[range.lowerBound]) { buffer.swapAt(middle, range.lowerBound) }
        if areInIncreasingOrder(buffer[last], buffer[range.lowerBound]) { buffer.swapAt(last, range.lowerBound) }
        if areInIncreasingOrder(buffer[last], buffer[middle]) { buffer.swapAt(last, middle) }
        buffer.swapAt(middle, last)
        var store = range.lowerBound
        for index in range.lowerBound..<last where areInIncreasingOrder(buffer[index], buffer[last]) {
            buffer.swapAt(index, store)
            store += 1
        }
        buffer.swapAt(store, last)
        return store
    }

    private func insertionSort(_ range: Range<Int>, by areInIncreasingOrder: (Element, Element) -> Bool) {
        guard range.count > 1 else { return }
        for end in (range.lowerBound + 1)..<range.upperBound {
            var index = end
            while index > range.lowerBound, areInIncreasingOrder(buffer[index], buffer[index - 1]) {
                buffer.swapAt(index, index - 1)
                index -= 1
            }
        }
    }
}
