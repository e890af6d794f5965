import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// How `-j`, `--per-host` and `--download-threads` are divided between the
/// engine threads: the shares add up to each limit exactly, and none is 0.
@Suite("Loop split")
struct LoopSplitTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let concurrency: Int, perHost: Int?, requested: Int?, cores: Int
        let shares: [Int], hostShares: [Int]?
        var testDescription: String { "-j \(concurrency) per-host \(perHost.map(String.init) ?? "-") threads \(requested.map(String.init) ?? "auto") cores \(cores)" }
    }

    static let cases: [Case] = [
        // Automatic: one loop per core, one per 8 transfers, at most 4.
        .init(concurrency: 16, perHost: nil, requested: nil, cores: 2, shares: [8, 8], hostShares: nil),
        .init(concurrency: 16, perHost: nil, requested: nil, cores: 1, shares: [16], hostShares: nil),
        .init(concurrency: 8, perHost: nil, requested: nil, cores: 2, shares: [8], hostShares: nil),
        .init(concurrency: 15, perHost: nil, requested: nil, cores: 2, shares: [15], hostShares: nil),
        .init(concurrency: 1, perHost: nil, requested: nil, cores: 8, shares: [1], hostShares: nil),
        .init(concurrency: 64, perHost: nil, requested: nil, cores: 2, shares: [32, 32], hostShares: nil),
        .init(concurrency: 64, perHost: nil, requested: nil, cores: 16, shares: [16, 16, 16, 16], hostShares: nil),
        .init(concurrency: 25, perHost: nil, requested: nil, cores: 3, shares: [9, 8, 8], hostShares: nil),
        // Per host: never more loops than the per-host limit, shares add up.
        .init(concurrency: 16, perHost: 1, requested: nil, cores: 2, shares: [16], hostShares: [1]),
        // ... and equal per-host shares: a loop allowed 1 of a host's 3
        // would finish its half of that host's URLs last.
        .init(concurrency: 16, perHost: 3, requested: nil, cores: 2, shares: [16], hostShares: [3]),
        .init(concurrency: 16, perHost: 4, requested: nil, cores: 2, shares: [8, 8], hostShares: [2, 2]),
        .init(concurrency: 64, perHost: 6, requested: nil, cores: 16, shares: [22, 21, 21], hostShares: [2, 2, 2]),
        // Asked for: honoured up to -j and --per-host.
        .init(concurrency: 4, perHost: nil, requested: 2, cores: 1, shares: [2, 2], hostShares: nil),
        .init(concurrency: 3, perHost: nil, requested: 8, cores: 2, shares: [1, 1, 1], hostShares: nil),
        .init(concurrency: 16, perHost: 2, requested: 4, cores: 2, shares: [8, 8], hostShares: [1, 1]),
        .init(concurrency: 16, perHost: 9, requested: 4, cores: 2, shares: [6, 5, 5], hostShares: [3, 3, 3]),
        .init(concurrency: 16, perHost: nil, requested: 1, cores: 8, shares: [16], hostShares: nil),
    ]

    @Test(arguments: cases)
    func split(_ c: Case) {
        let split = LoopSplit(concurrency: c.concurrency, perHost: c.perHost, requested: c.requested, cores: c.cores)
        #expect(split.shares.map(\.concurrency) == c.shares)
        let noLimit: [Int?] = c.shares.map { _ in nil }
        #expect(split.shares.map(\.perHost) == (c.hostShares.map { $0.map { Optional($0) } } ?? noLimit))
        #expect(split.shares.reduce(0) { $0 + $1.concurrency } == c.concurrency)
        if let perHost = c.perHost { #expect(split.shares.reduce(0) { $0 + ($1.perHost ?? 0) } == perHost) }
    }

    @Test func aURLAlwaysGoesToTheSameLoopAndTheLoopsShareTheWork() {
        let split = LoopSplit(concurrency: 16, perHost: nil, requested: nil, cores: 2)
        // Numbered names, and names differing only in their last characters.
        let urls = (0..<20_000).map { "http://127.0.0.1:18471/thumbs/\($0 / 1000)/t\($0).jpg" }
            + (0..<2_000).map { "http://127.0.0.1:8080/slow/5000/?i=\($0)" }
        var counts = [0, 0]
        for url in urls {
            let loop = split.loop(forURL: url)
            #expect(loop == split.loop(forURL: String(url)))
            counts[loop] += 1
        }
        #expect(counts.allSatisfy { $0 > 10_000 }, "\(counts)")
        let tail = (0..<100).map { split.loop(forURL: "http://127.0.0.1:8080/slow/5000/?i=\($0)") }
        #expect(tail.filter { $0 == 0 }.count > 25 && tail.filter { $0 == 1 }.count > 25, "\(tail)")
        #expect(LoopSplit(concurrency: 16, perHost: nil, requested: 1, cores: 2).loop(forURL: urls[1]) == 0)
        // Uneven shares of -j get URLs in proportion: 9 and 8 of 17.
        let uneven = LoopSplit(concurrency: 17, perHost: nil, requested: 2, cores: 2)
        var split17 = [0, 0]
        for url in urls { split17[uneven.loop(forURL: url)] += 1 }
        let expected0 = Double(urls.count) * 9 / 17
        #expect(abs(Double(split17[0]) - expected0) < 0.02 * Double(urls.count), "\(split17)")
    }
}
