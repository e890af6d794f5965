/// `--limit-rate` and pauses for memory: a chunk the write callback paused
/// on is handed over again by curl on resume, and must not be taken from
/// the bandwidth bucket twice. Holds how many bytes of the chunk curl
/// keeps were already taken. Pure.
struct PrepaidBytes: Equatable {
    private(set) var held = 0

    /// Bytes of a chunk of `count` still to be taken from the bucket.
    func due(_ count: Int) -> Int { max(0, count - held) }

    /// The chunk of `count` bytes was paid for and handed to the body:
    /// `consumed` (they are gone from curl), or not (a pause: curl keeps
    /// them and hands them over again).
    mutating func delivered(_ count: Int, consumed: Bool) {
        let paid = max(held, count)
        held = consumed ? paid - count : paid
    }
}
