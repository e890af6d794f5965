import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// The plan's front-coded URL storage: every entry reads back byte for byte
/// (URL, key, priority, re-encoding, line), whatever its neighbours share.
@Suite struct FrontCodedArenaTests {
    struct Line {
        var url: String
        var key: String?
        var priority: RequestPriority?
        var reencoded = false
        init(_ url: String, key: String? = nil, _ priority: RequestPriority? = nil, reencoded: Bool = false) {
            self.url = url
            self.key = key
            self.priority = priority
            self.reencoded = reencoded
        }
    }

    static let block = FrontCodedArena.blockSize
    static let long = "https://e.com/" + String(repeating: "a", count: 65535 - 14)
    static let generated = (0..<(3 * block + 1)).map { Line("https://img.example/images/0000/photo-\(1_000_000 + $0).jpg?w=320") }

    /// name, lines.
    static let cases: [(String, [Line])] = [
        ("no shared prefix", ["https://a.com/1", "http://b.org/2", "https://c.net/3", "http://d/4"].map { Line($0) }),
        ("identical URLs", Array(repeating: Line("https://e.com/same.jpg"), count: block + 3)),
        ("a URL that is a prefix of the block's first",
         [Line("https://e.com/photo.jpg?w=320"), Line("https://e.com/photo.jpg"), Line("https://e.com/p"), Line("h")]),
        ("keys differing from URLs", [
            Line("https://e.com/a.jpg", key: "https://e.com/a.jpg#thumb"),
            Line("https://e.com/b.jpg", key: "ключ"),
            // Canonically equal to the URL as a Swift String, not as bytes:
            // the key's bytes are what is hashed, so they must come back.
            Line("https://e.com/K", key: "https://e.com/\u{212A}"),
            Line("https://e.com/c.jpg?sig=1", key: "https://e.com/c.jpg"),   // --key-strip-query
            Line("https://e.com/c.jpg?sig=2", key: "https://e.com/c"),
            Line("https://e.com/d.jpg", key: "https://e.com/d.jpg", .high),
        ]),
        ("lines near 64 KiB", [
            Line(long), Line(long), Line(String(long.dropLast()) + "b"), Line("https://e.com/x", key: long),
            Line(long, key: String(long.dropLast(100))), Line(String(long.dropLast(300))),
        ]),
        ("non-ASCII, re-encoded", [
            Line("https://e.com/%C3%BC.jpg", reencoded: true),
            Line("https://xn--bcher-kva.example/a.jpg", .low, reencoded: true),
            // Raw UTF-8 sharing the first byte of a 2-byte character (ü is
            // C3 BC, ý C3 BD): the split falls inside it.
            Line("https://e.com/ü"), Line("https://e.com/ý"), Line("https://e.com/ýý", key: "https://e.com/ý"),
        ]),
        ("block boundaries", generated),
        ("a shared prefix over 255 bytes", (0..<(block + 2)).map { Line("https://e.com/" + String(repeating: "p", count: 400) + "/\($0)") }),
    ]

    func plan(_ lines: [Line], shard: WarmPlan.Shard? = nil) -> WarmPlan {
        let plan = WarmPlan(shard: shard)
        _ = plan.addManifestPath("m")
        for (i, l) in lines.enumerated() {
            plan.add(ManifestEntry(url: l.url, key: l.key ?? l.url, priority: l.priority,
                                   source: ManifestSource(fileIndex: 0, line: i + 1), reencoded: l.reencoded))
        }
        plan.finalize()
        return plan
    }

    @Test(arguments: cases.indices)
    func everyEntryReadsBackByteForByte(_ c: Int) {
        let (name, lines) = Self.cases[c]
        let plan = plan(lines)
        #expect(plan.count == lines.count, "\(name)")
        for index in 0..<plan.count {
            let line = lines[plan.source(index).line - 1]
            #expect(Array(plan.url(index).utf8) == Array(line.url.utf8), "\(name) #\(index)")
            #expect(Array(plan.key(index).utf8) == Array((line.key ?? line.url).utf8), "\(name) #\(index)")
            #expect(plan.priority(index) == line.priority ?? .normal, "\(name) #\(index)")
            #expect(plan.reencoded(index) == line.reencoded, "\(name) #\(index)")
        }
    }

    @Test func shardsAndDuplicatesKeepBlocksAligned() {
        // Every third line repeats an earlier URL; a shard keeps a third of
        // the keys, so the plan's blocks are not the manifest's.
        let lines = (0..<200).map { i in Line("https://img.example/p/\(i % 3 == 2 ? i - 1 : i).jpg") }
        var seen: [String] = []
        for k in 1...3 {
            let plan = plan(lines, shard: .init(index: k, count: 3))
            for index in 0..<plan.count {
                #expect(plan.url(index) == lines[plan.source(index).line - 1].url)
                if let d = plan.duplicate(of: index) { #expect(plan.url(d) == plan.url(index)) }
            }
            seen += plan.order.map { plan.url(Int($0)) }
        }
        #expect(seen.sorted() == Set(lines.map(\.url)).sorted())
    }

    @Test func generatedListsStoreLessThanHalfTheirBytes() {
        let lines = (0..<10_000).map { Line("http://127.0.0.1:18471/images/\($0 / 1000)/photo-\(1_000_000 + $0).jpg?w=320&sig=\($0 &* 2_654_435_761 % 1_000_000)") }
        let plan = plan(lines)
        let total = lines.reduce(0) { $0 + $1.url.utf8.count }
        #expect(plan.storedURLBytes * 2 < total, "\(plan.storedURLBytes) of \(total) bytes stored")
        #expect((0..<plan.count).allSatisfy { plan.url($0) == lines[$0].url })
    }

    @Test func manyChunksOfLongURLs() {
        // About 3 arena chunks of 4 MiB.
        let lines = (0..<200).map { Line("https://e.com/\($0)/" + String(repeating: "z", count: 60_000)) }
        let plan = plan(lines)
        #expect((0..<plan.count).allSatisfy { plan.url($0) == lines[$0].url })
    }

    @Test(arguments: [
        ("", "", 0), ("abc", "", 0), ("abc", "abd", 2), ("abc", "abc", 3), ("abc", "abcd", 3), ("xbc", "abc", 0),
        (String(repeating: "a", count: 300), String(repeating: "a", count: 300), 255),
    ])
    func sharedPrefixLength(_ a: String, _ b: String, _ expected: Int) {
        let n = Array(a.utf8).withUnsafeBufferPointer { x in
            Array(b.utf8).withUnsafeBufferPointer { y in FrontCodedArena.sharedPrefixLength(x, y) }
        }
        #expect(n == expected)
    }
}
