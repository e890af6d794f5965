import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

struct PrepaidBytesTests {
    /// A chunk paused on for memory is handed over again by curl: the
    /// bandwidth bucket is charged for it once. Each row: the chunk curl
    /// hands over, whether the callback consumed it, the bytes due to the
    /// bucket, and what stays paid for after.
    @Test func aChunkHandedOverAgainIsNotPaidTwice() {
        let table: [(count: Int, consumed: Bool, due: Int, held: Int)] = [
            (16_384, false, 16_384, 16_384),   // paid, then paused for memory
            (16_384, false, 0, 16_384),        // resumed, paused again: nothing due
            (16_384, true, 0, 0),              // resumed, consumed: nothing due
            (1000, true, 1000, 0),             // a fresh chunk
            (8000, false, 8000, 8000),
            (3000, true, 0, 5000),             // curl hands the kept bytes over in parts
            (5000, true, 0, 0),
            (6000, false, 6000, 6000),
            (9000, true, 3000, 0),             // more arrived while paused: only that is due
        ]
        var prepaid = PrepaidBytes()
        for (n, row) in table.enumerated() {
            #expect(prepaid.due(row.count) == row.due, "row \(n)")
            prepaid.delivered(row.count, consumed: row.consumed)
            #expect(prepaid.held == row.held, "row \(n)")
        }
    }
}
