import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// The compact structures behind `cache prune`'s memory bound.
@Suite struct PruneIncrementalSortTests {
    /// Taking every element gives the sorted order; taking `k` gives the k
    /// smallest in order at the front, the rest behind them in any order.
    @Test(arguments: [
        ([Int](), 0),
        ([7], 1),
        ([2, 1], 1),
        ([2, 1], 2),
        ([1, 2, 3, 4, 5], 5),
        ([5, 4, 3, 2, 1], 5),
        ([5, 4, 3, 2, 1], 2),
        ([3, 1, 3, 1, 2, 2], 6),
        ([3, 1, 3, 1, 2, 2], 3),
        ([9, 0, 8, 1, 7, 2, 6, 3, 5, 4], 4),
        ([4, 4, 4, 4], 4),
    ])
    func takesSmallestFirst(values: [Int], take: Int) {
        var buffer = values
        let taken = buffer.withUnsafeMutableBufferPointer { pointer -> [Int] in
            var order = IncrementalSort(pointer)
            var slots: [Int] = []
            for _ in 0..<take { if let slot = order.next(by: <) { slots.append(slot) } }
            #expect(order.taken == take)
            return slots
        }
        #expect(taken == Array(0..<take))
        #expect(Array(buffer[..<take]) == Array(values.sorted()[..<take]))
        #expect(buffer.sorted() == values.sorted())
    }

    @Test func emptyBufferGivesNothing() {
        var buffer = [Int]()
        buffer.withUnsafeMutableBufferPointer { pointer in
            var order = IncrementalSort(pointer)
            #expect(order.next(by: <) == nil)
        }
    }

    /// Many pseudo-random values, some equal, taken in part or in full:
    /// the same order as `sorted`.
    @Test(arguments: [0, 1, 17, 1_000, 49_999, 50_000])
    func matchesSortOnLargeInput(take: Int) {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let values = (0..<50_000).map { _ -> Int in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 50)
        }
        var buffer = values
        buffer.withUnsafeMutableBufferPointer { pointer in
            var order = IncrementalSort(pointer)
            for expected in 0..<take { #expect(order.next(by: <) == expected) }
        }
        #expect(Array(buffer[..<take]) == Array(values.sorted()[..<take]))
        #expect(buffer.sorted() == values.sorted())
    }

    /// Already sorted and reversed input (a cache copied in date order).
    @Test(arguments: [false, true])
    func orderedInput(reversed: Bool) {
        let values = reversed ? Array((0..<10_000).reversed()) : Array(0..<10_000)
        var buffer = values
        buffer.withUnsafeMutableBufferPointer { pointer in
            var order = IncrementalSort(pointer)
            while order.next(by: <) != nil {}
        }
        #expect(buffer == Array(0..<10_000))
    }
}

@Suite struct PruneNameArenaPackingTests {
    static let md5 = "b46ca04023feeac3addabe8e574e2211"
    static let sha1 = "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3"
    static let sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

    /// (name, bytes it takes in the arena): a tag, the digest's bytes, an
    /// uncommon extension with its NUL; anything else as it is, with a tag
    /// and a NUL.
    static let cases: [(name: String, bytes: Int)] = {
        var cases: [(name: String, bytes: Int)] = []
        cases.append((md5 + ".jpg", 17))
        cases.append((md5, 17))
        cases.append((md5 + ".heic", 17))
        cases.append((md5 + ".tiff", 1 + 16 + 5 + 1))
        cases.append((sha1, 21))
        cases.append((sha1 + ".png", 21))
        cases.append((sha1 + ".bin", 1 + 20 + 4 + 1))
        cases.append((sha256, 33))
        cases.append((sha256 + ".webp", 33))
        cases.append((sha256 + ".", 1 + 32 + 1 + 1))
        // Near misses: stored as bytes.
        cases.append((String(md5.dropLast()), 31 + 2))
        cases.append((sha1 + "0", 41 + 2))
        cases.append((sha256.uppercased(), 64 + 2))
        cases.append((String(sha256.dropLast(2)), 62 + 2))
        cases.append((md5 + "x.jpg", 37 + 2))
        cases.append(("", 2))
        cases.append(("x.jpg", 7))
        cases.append((String(repeating: "0", count: 48), 48 + 2))
        return cases
    }()

    @Test(arguments: cases)
    func digestNamesArePacked(name: String, bytes: Int) throws {
        let arena = NameArena()
        var copy = name
        let offset = try copy.withUTF8 { try $0.withMemoryRebound(to: CChar.self) { try arena.append($0.baseAddress!, length: $0.count) } }
        #expect(arena.string(offset) == name)
        #expect(arena.stored == bytes)
    }

    /// The layouts' own names for a key, as the warm command stores them.
    /// (The layouts with an index, Glide's and Coil's journals and flutter's
    /// database, are pruned through it, not through the arena.)
    @Test(arguments: CacheLayoutKind.allCases.filter { $0.layout() is any FolderLayout })
    func layoutNamesArePacked(kind: CacheLayoutKind) throws {
        let arena = NameArena()
        var name = kind.layout().entryName(forKey: "https://example.com/a.jpg").storedName
        let offset = try name.withUTF8 { try $0.withMemoryRebound(to: CChar.self) { try arena.append($0.baseAddress!, length: $0.count) } }
        #expect(arena.string(offset) == name)
        #expect(arena.stored < name.utf8.count / 2 + 2)
    }
}

/// The remover's arena entry point: the same outcomes as by name, and a dry
/// run that touches nothing.
@Suite struct PruneRemoverArenaTests {
    @Test(arguments: [false, true])
    func removesByArenaOffset(dryRun: Bool) throws {
        let f = try PruneFixture()
        let name = PruneNameArenaPackingTests.md5 + ".jpg"
        try f.file(name, atime: PruneFixture.now - PruneFixture.day)
        let arena = NameArena()
        var copy = name
        let offset = try copy.withUTF8 { try $0.withMemoryRebound(to: CChar.self) { try arena.append($0.baseAddress!, length: $0.count) } }
        var missing = "gone"
        let gone = try missing.withUTF8 { try $0.withMemoryRebound(to: CChar.self) { try arena.append($0.baseAddress!, length: $0.count) } }
        let remover = try FileRemover(directory: f.directory,
                                      policy: try PruneOptions(maxAge: 0).policy(now: PruneFixture.now), dryRun: dryRun)
        #expect(remover.remove(nameAt: gone, in: arena, directoryIndex: 0, dueDate: PruneFixture.now) == (dryRun ? .removed : .vanished))
        #expect(remover.remove(nameAt: offset, in: arena, directoryIndex: 0, dueDate: PruneFixture.now) == .removed)
        #expect(f.remaining() == (dryRun ? [name] : []))
    }
}
