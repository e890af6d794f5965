#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

@Suite struct BudgetGateTests {
    /// Tickets decided out of order are answered in ticket order, each
    /// against the room left by the earlier ones.
    @Test func decidesInTicketOrderWhateverOrderAnswersCome() {
        let gate = BudgetGate(limit: 10, used: 2)
        let tickets = (0..<5).map { _ in gate.issue() }
        #expect(tickets == [0, 1, 2, 3, 4])
        var answers: [(Int, Bool)] = []
        gate.decide(3, size: 1) { answers.append((3, $0)) }
        gate.decide(1, size: nil) { answers.append((1, $0)) }
        gate.decide(2, size: 6) { answers.append((2, $0)) }
        #expect(answers.isEmpty)  // ticket 0 is not decided yet
        gate.decide(0, size: 3) { answers.append((0, $0)) }
        // 2 + 3 = 5; nothing; 5 + 6 = 11 > 10 refused; 5 + 1 = 6.
        #expect(answers.map(\.0) == [0, 1, 2, 3])
        #expect(answers.map(\.1) == [true, true, false, true])
        #expect(!gate.isFull)
        gate.decide(4, size: 4) { answers.append((4, $0)) }
        #expect(answers.last.map { $0.1 } == true)
        #expect(gate.isFull)
    }

    @Test func countsTheCacheAsAllocatedBytes() throws {
        let cache = PrefetcherTests.emptyCache()
        defer { try? FileManager.default.removeItem(atPath: cache.directory) }
        try [UInt8](repeating: 1, count: 5000).withUnsafeBytes {
            _ = try cache.store($0, for: cache.fileName(forKey: "https://a.example/x.png"))
        }
        var st = stat()
        #expect(stat(cache.path(forKey: "https://a.example/x.png"), &st) == 0)
        let allocated = UInt64(st.st_blocks) * 512
        #expect(allocated >= 5000)
        // Room for exactly one more 4 KiB page; hidden state is not counted.
        let gate = BudgetGate(limit: allocated + 4096, cacheDirectory: cache.directory)
        #expect(!gate.isFull)
        var fits: Bool?
        gate.decide(gate.issue(), size: 4096) { fits = $0 }
        #expect(fits == true)
        #expect(gate.isFull)
    }
}
