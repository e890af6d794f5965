import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `cache clear`, `cache prune` and `cache verify --delete` delete only in a
/// folder recognisably a cache of the layout, and never in `/`, a home
/// folder, a system folder or a repository's root, not even with `--force`;
/// `warm` does not write into a folder that holds something else. Against
/// the real binary, as root and as uid 65534.
@Suite(.serialized) struct CacheRecognitionTests {
    /// A fake home folder: documents, notes, sources.
    static func makeHome(_ dir: String) throws -> [String] {
        let files = ["Documents/thesis.docx", "notes.txt", "src/main.c"]
        for file in files {
            let path = dir + "/" + file
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: path, contents: Data("mine \(file)\n".utf8))
        }
        return files.map { dir + "/" + $0 }
    }

    static let deleting: [[String]] = [["cache", "clear"], ["cache", "clear", "--all"], ["cache", "prune", "--max-age", "0s"],
                                       ["cache", "prune", "--max-size", "1"], ["cache", "verify", "--delete"]]

    /// Runs as root, or as uid 65534 under setpriv (`asNobody`).
    static func run(_ args: [String], asNobody: Bool, environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        if asNobody {
            let setpriv = try neededTool("setpriv", for: "running imgwarm as uid 65534")
            if geteuid() != 0 { try prerequisiteMissing("running imgwarm as uid 65534 needs root") }
            let env = environment.map { "\($0.key)=\($0.value)" }
            let r = try #require(runTool(setpriv, ["--reuid=65534", "--regid=65534", "--clear-groups", "env"] + env
                + [BinaryRunner.executable] + args))
            return (r.status, r.output)
        }
        let r = try BinaryRunner.run(args, environment: environment)
        return (r.status, r.stdout + r.stderr)
    }

    @Test(arguments: [false, true]) func aHomeFullOfDocumentsIsNotCleared(asNobody: Bool) throws {
        let dir = makeTempDirectory("imgwarm-recognise")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let home = dir + "/home"
        let files = try Self.makeHome(home)
        if asNobody { _ = runTool("/bin/chown", ["-R", "65534:65534", home]) }
        for command in Self.deleting {
            for layout in ["sdwebimage", "kingfisher", "nuke", "flutter"] {
                let r = try Self.run(command + ["--cache", home, "--layout", layout], asNobody: asNobody)
                #expect(r.status == 3, "\(command) \(layout): \(r.output)")
                #expect(r.output.contains("\(home): not recognisably a \(layout) cache"), "\(r.output)")
                #expect(r.output.contains("notes.txt") && r.output.contains("(--force to proceed)"), "\(r.output)")
            }
            // IMGWARM_CACHE names it the same way.
            let viaEnvironment = try Self.run(command, asNobody: asNobody, environment: ["IMGWARM_CACHE": home])
            #expect(viaEnvironment.status == 3, "\(viaEnvironment.output)")
        }
        for file in files { #expect(FileManager.default.fileExists(atPath: file), "\(file)") }
        #expect(!FileManager.default.fileExists(atPath: home + "/.imgwarm"))
        // The dry run lists what clear would remove, names escaped.
        FileManager.default.createFile(atPath: home + "/bell\u{7}name", contents: Data([1]))
        let dry = try Self.run(["cache", "clear", "--dry-run", "--cache", home], asNobody: asNobody)
        #expect(dry.status == 0, "\(dry.output)")
        #expect(dry.output.contains("notes.txt (") && dry.output.contains("Documents/thesis.docx (")
            && dry.output.contains("bell\\x07name (1 bytes)") && dry.output.contains("would remove 4 files"), "\(dry.output)")
        for file in files { #expect(FileManager.default.fileExists(atPath: file), "\(file)") }
        // --force on a folder that is no home, no system folder, no
        // repository: cleared.
        let forced = try Self.run(["cache", "clear", "--force", "--cache", home], asNobody: asNobody)
        #expect(forced.status == 0, "\(forced.output)")
        for file in files { #expect(!FileManager.default.fileExists(atPath: file), "\(file)") }
    }

    /// `warm --cache ~` would plant `.imgwarm` and entries there: refused,
    /// as is a folder of another layout.
    @Test func warmDoesNotWriteIntoAFolderOfSomethingElse() throws {
        let f = try WarmFixture()
        let manifest = f.writeManifest(f.servePNGs(2))
        let files = try Self.makeHome(f.cache)
        let r = try f.warm([manifest])
        #expect(r.status == 3, "\(r.stderr)")
        #expect(r.stderr.contains("not recognisably a sdwebimage cache") && r.stderr.contains("nothing is written into it"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: f.cache + "/.imgwarm"))
        let forced = try f.warm([manifest, "--force"])
        #expect(forced.status == 0, "\(forced.stderr)")
        for file in files { #expect(FileManager.default.fileExists(atPath: file)) }
    }

    /// `/`, `$HOME`, the passwd home and system folders: refused even with
    /// --force. Run as uid 65534 with `--layout nuke` (the folder's own
    /// files only) so that nothing real could go even if the check failed:
    /// that user may write nothing in `/`, and the fake home is root's.
    @Test(arguments: ["clear", "prune", "verify"]) func neverTheRootNorAHomeNorASystemFolder(_ command: String) throws {
        let dir = makeTempDirectory("imgwarm-never")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        chmod(dir, 0o755)
        let home = dir + "/home"
        let files = try Self.makeHome(home)
        let extra = command == "prune" ? ["--max-size", "1"] : command == "verify" ? ["--delete"] : []
        for (folder, reason) in [("/", "the root folder /"), (home, "a home folder ($HOME)"), ("/etc", "a system folder (/etc)"),
                                 ("/usr", "a system folder (/usr)"), ("/var", "a system folder (/var)")] {
            let r = try Self.run(["cache", command] + extra + ["--force", "--layout", "nuke", "--cache", folder], asNobody: true,
                                 environment: ["HOME": home])
            #expect(r.status == 3, "\(folder): \(r.output)")
            #expect(r.output.contains("\(folder): \(reason); nothing is deleted in it, not even with --force"), "\(r.output)")
        }
        for file in files { #expect(FileManager.default.fileExists(atPath: file)) }
    }

    /// A folder that holds `.git` is a repository's root: never; a cache
    /// inside a repository is fine.
    @Test func aRepositoryRootIsNeverClearedButACacheInsideOneIs() throws {
        let f = try WarmFixture()
        #expect(try f.warm([f.writeManifest(f.servePNGs(2))]).status == 0)
        try FileManager.default.createDirectory(atPath: f.dir + "/.git", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: f.dir + "/README", contents: Data("r".utf8))
        let repo = try BinaryRunner.run(["cache", "clear", "--force", "--cache", f.dir])
        #expect(repo.status == 3, "\(repo.stderr)")
        #expect(repo.stderr.contains("\(f.dir): holds .git: a repository, not a cache; nothing is deleted in it, not even with --force"),
                "\(repo.stderr)")
        #expect(FileManager.default.fileExists(atPath: f.dir + "/README"))
        #expect(f.cacheFiles().count == 2)
        let inside = try BinaryRunner.run(["cache", "clear", "--cache", f.cache])
        #expect(inside.status == 0, "\(inside.stderr)")
        #expect(f.cacheFiles().isEmpty)
    }
}
