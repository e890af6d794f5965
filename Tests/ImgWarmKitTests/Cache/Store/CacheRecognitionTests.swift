import Foundation
import Testing
@testable import ImgWarmSupport
@testable import ImgWarmDecode
@testable import ImgWarmDownload
@testable import ImgWarmCache
@testable import ImgWarmInspect
@testable import ImgWarmReport
@testable import ImgWarmWarm

/// Whether a folder may be deleted in or written into: the decision from
/// facts alone, by table, and the passwd reader apart.
@Suite struct CacheRecognitionTests {
    static func survey(state: Bool = false, git: Bool = false, journal: (Int, Int)? = nil, flutter: Bool = false,
                       names: [String] = [], surveyed: Bool = true) -> CacheFolderSurvey {
        var s = CacheFolderSurvey()
        s.holdsState = state
        s.holdsGit = git
        s.journalHeader = journal.map { CacheFolderSurvey.JournalHeader(appVersion: $0.0, valueCount: $0.1) }
        s.flutterSchema = flutter
        s.namesSurveyed = surveyed
        for kind in CacheLayoutKind.allCases {
            let misfits = names.filter { !kind.fitsName($0, inFolder: "") }
            s.misfits[kind] = Array(misfits.prefix(CacheFolderSurvey.misfitsKept))
            s.fitting[kind] = names.count - misfits.count
        }
        return s
    }

    static let md5 = String(repeating: "a", count: 32)
    static let sha256 = String(repeating: "b", count: 64)

    struct Row: Sendable, CustomStringConvertible {
        var name: String
        var protected: String?
        var survey: CacheFolderSurvey
        var layout: CacheLayoutKind
        var force: Bool
        var expected: CacheRecognition.Verdict
        var description: String { name }
    }

    static let rows: [Row] = [
        Row(name: "empty folder", survey: survey(), layout: .sdwebimage, force: false, expected: .proceed),
        Row(name: "imgwarm state", survey: survey(state: true, names: ["notes.txt"]), layout: .sdwebimage, force: false, expected: .proceed),
        Row(name: "sdwebimage names", survey: survey(names: [md5 + ".jpg", md5]), layout: .sdwebimage, force: false, expected: .proceed),
        Row(name: "a home's files", survey: survey(names: ["notes.txt", "thesis.docx", "main.c", "x"]), layout: .sdwebimage, force: false,
            expected: .unrecognised(misfits: ["notes.txt", "thesis.docx", "main.c"])),
        Row(name: "a home's files, forced", survey: survey(names: ["notes.txt"]), layout: .sdwebimage, force: true, expected: .proceed),
        Row(name: "one stray file among entries", survey: survey(names: [md5 + ".png", "stray.txt"]), layout: .sdwebimage, force: false,
            expected: .unrecognised(misfits: ["stray.txt"])),
        Row(name: "glide journal", survey: survey(journal: (1, 1), names: ["x.txt"]), layout: .glide, force: false, expected: .proceed),
        Row(name: "coil journal is not glide's", survey: survey(journal: (3, 2), names: ["x.txt"]), layout: .glide, force: false,
            expected: .unrecognised(misfits: ["x.txt"])),
        Row(name: "glide value files only", survey: survey(names: [sha256 + ".0", sha256 + ".0.tmp", "journal"]), layout: .glide, force: false,
            expected: .proceed),
        Row(name: "coil value 1 is no glide name", survey: survey(names: [sha256 + ".1"]), layout: .glide, force: false,
            expected: .unrecognised(misfits: [sha256 + ".1"])),
        Row(name: "flutter database", survey: survey(flutter: true, names: ["other"]), layout: .flutter, force: false, expected: .proceed),
        Row(name: "names not surveyed", survey: survey(surveyed: false), layout: .nuke, force: false, expected: .unrecognised(misfits: [])),
        Row(name: "root folder, forced", protected: "the root folder /", survey: survey(state: true), layout: .sdwebimage, force: true,
            expected: .never("the root folder /")),
        Row(name: "home folder with imgwarm state", protected: "a home folder ($HOME)", survey: survey(state: true), layout: .nuke, force: true,
            expected: .never("a home folder ($HOME)")),
        Row(name: "repository root, forced", survey: survey(state: true, git: true), layout: .sdwebimage, force: true,
            expected: .never("holds .git: a repository, not a cache")),
    ]

    @Test(arguments: rows) func verdict(_ row: Row) {
        let facts = CacheRecognition.Facts(protected: row.protected, survey: row.survey)
        #expect(CacheRecognition.verdict(facts, layout: row.layout, force: row.force) == row.expected)
    }

    @Test func refusalsAreOneLineNamingWhatDoesNotFit() throws {
        let error = try #require(CacheRecognition.refusal(.unrecognised(misfits: ["a.txt", "b"]), path: "/c", layout: .nuke, purpose: .delete))
        #expect(error.description == "/c: not recognisably a nuke cache (no .imgwarm, no nuke index, files it does not name so: 'a.txt', 'b'); "
            + "nothing is deleted in it (--force to proceed)")
        let never = try #require(CacheRecognition.refusal(.never("the root folder /"), path: "/", layout: .nuke, purpose: .write))
        #expect(never.description == "/: the root folder /; nothing is written into it, not even with --force")
        #expect(CacheRecognition.refusal(.proceed, path: "/c", layout: .nuke, purpose: .delete) == nil)
    }

    @Test func passwdHomesAreReadFromWellFormedLines() {
        let text = """
            root:x:0:0:root:/root:/bin/bash
            # a comment:x:1:1::/nope:/bin/sh
            nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin

            short:x:1:1
            relative:x:2:2::home/rel:/bin/sh
            :x:3:3::/empty-name:/bin/sh
            alice:x:1000:1000:Alice, Room 1:/home/alice:/bin/zsh
            """
        let homes = PasswdHomes.parse(text)
        #expect(homes.map(\.user) == ["root", "nobody", "alice"])
        #expect(homes.map(\.home) == ["/root", "/nonexistent", "/home/alice"])
    }

    /// The never-list compares device and inode: another name for `/`
    /// (here `/.`) is `/` all the same, and a folder of its own is not.
    @Test func protectedFoldersAreComparedByIdentity() throws {
        var list = ProtectedFolders()
        list.add("/", reason: "root")
        let slashDot = try FolderHandle.open("/.", in: AT_FDCWD, path: "/.", listing: false)
        #expect(list.reason(for: slashDot.identity) == "root")
        let dir = NSTemporaryDirectory() + "imgwarm-protected-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let own = try FolderHandle.open(dir, in: AT_FDCWD, path: dir, listing: false)
        #expect(list.reason(for: own.identity) == nil)
        let current = ProtectedFolders.current(environment: ["HOME": dir])
        #expect(current.reason(for: own.identity) == "a home folder ($HOME)")
        #expect(current.reason(for: slashDot.identity) == "the root folder /")
        let etc = try FolderHandle.open("/etc", in: AT_FDCWD, path: "/etc", listing: false)
        #expect(current.reason(for: etc.identity) == "a system folder (/etc)")
    }
}
