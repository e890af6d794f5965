import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

@Suite struct WarmPlanTests {
    func entry(_ url: String, _ p: RequestPriority? = nil, key: String? = nil, line: Int) -> ManifestEntry {
        ManifestEntry(url: url, key: key ?? url, priority: p, source: ManifestSource(fileIndex: 0, line: line))
    }

    @Test func priorityOrderFIFOAndLIFO() {
        for order in ExecutionOrder.allCases {
            let plan = WarmPlan(order: order)
            _ = plan.addManifestPath("m")
            plan.add(entry("https://e/1", .low, line: 1))
            plan.add(entry("https://e/2", line: 2))
            plan.add(entry("https://e/3", .high, line: 3))
            plan.add(entry("https://e/4", .low, line: 4))
            plan.add(entry("https://e/5", .high, line: 5))
            plan.finalize()
            let urls = plan.order.map { plan.url(Int($0)) }
            if order == .fifo {
                #expect(urls == ["https://e/3", "https://e/5", "https://e/2", "https://e/1", "https://e/4"])
            } else {
                #expect(urls == ["https://e/5", "https://e/3", "https://e/2", "https://e/4", "https://e/1"])
            }
        }
    }

    @Test func duplicatesByKeyKeepTheHighestPriority() {
        let plan = WarmPlan()
        plan.add(entry("https://e/a", .low, line: 1))
        plan.add(entry("https://e/b", key: "shared", line: 2))
        plan.add(entry("https://e/a", .high, line: 3))
        plan.add(entry("https://e/c", .high, key: "shared", line: 4))
        plan.add(entry("https://e/a", line: 5))
        plan.finalize()
        #expect(plan.uniqueCount == 2)
        #expect(plan.order.map { Int($0) } == [2, 3])
        #expect(plan.duplicate(of: 0) == 2)
        #expect(plan.duplicate(of: 4) == 2)
        #expect(plan.duplicate(of: 1) == 3)
        #expect(plan.duplicate(of: 2) == nil)
    }

    @Test func shardsCoverEveryEntryExactlyOnceAndEvenly() {
        let urls = (0..<3000).map { "https://e.com/img/\($0).jpg" }
        var seen = [String: Int]()
        var sizes: [Int] = []
        for k in 1...3 {
            let plan = WarmPlan(shard: .init(index: k, count: 3))
            for (i, u) in urls.enumerated() { plan.add(entry(u, line: i + 1)) }
            plan.finalize()
            sizes.append(plan.uniqueCount)
            for i in plan.order { seen[plan.url(Int(i)), default: 0] += 1 }
        }
        #expect(seen.count == urls.count)
        #expect(seen.values.allSatisfy { $0 == 1 })
        #expect(sizes.allSatisfy { abs($0 - 1000) < 100 })
    }

    @Test func keysAndURLsRoundTrip() {
        let plan = WarmPlan()
        plan.add(entry("https://e/ü.jpg", key: "ключ", line: 7))
        plan.finalize()
        #expect(plan.url(0) == "https://e/ü.jpg")
        #expect(plan.key(0) == "ключ")
        #expect(plan.source(0).line == 7)
    }
}
