//! The file-operation vocabulary (dbench's NetBench-derived loadfile ops,
//! reference §4.6): each kind's name, parameter layout, and the rule that
//! says whether an outcome that differs from the loadfile's expectation is
//! fatal to the client. Every backend executes these same kinds; nothing
//! here touches a file or a socket.

/// One operation kind; its index is its request class in the run's stats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// `NTCreateX path create_options disposition handle`.
    NtCreateX,
    /// `Close handle`.
    Close,
    /// `ReadX handle offset size ret_size`.
    ReadX,
    /// `WriteX handle offset size ret_size`.
    WriteX,
    /// `Flush handle`.
    Flush,
    /// `LockX handle offset length`.
    LockX,
    /// `UnlockX handle offset length`.
    UnlockX,
    /// `Rename old new`.
    Rename,
    /// `Unlink path attributes`.
    Unlink,
    /// `Deltree dir`.
    Deltree,
    /// `Mkdir dir`.
    Mkdir,
    /// `Rmdir dir`.
    Rmdir,
    /// `QUERY_PATH_INFORMATION path level`.
    QueryPathInformation,
    /// `QUERY_FILE_INFORMATION handle level`.
    QueryFileInformation,
    /// `SET_FILE_INFORMATION handle level`.
    SetFileInformation,
    /// `QUERY_FS_INFORMATION level`.
    QueryFsInformation,
    /// `FIND_FIRST pattern level max_count count`.
    FindFirst,
}

impl OpKind {
    /// Number of kinds.
    pub const COUNT: usize = 17;
    /// Every kind, in class order.
    pub const ALL: [OpKind; Self::COUNT] = [
        Self::NtCreateX,
        Self::Close,
        Self::ReadX,
        Self::WriteX,
        Self::Flush,
        Self::LockX,
        Self::UnlockX,
        Self::Rename,
        Self::Unlink,
        Self::Deltree,
        Self::Mkdir,
        Self::Rmdir,
        Self::QueryPathInformation,
        Self::QueryFileInformation,
        Self::SetFileInformation,
        Self::QueryFsInformation,
        Self::FindFirst,
    ];

    /// The loadfile's spelling, also the class name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::NtCreateX => "NTCreateX",
            Self::Close => "Close",
            Self::ReadX => "ReadX",
            Self::WriteX => "WriteX",
            Self::Flush => "Flush",
            Self::LockX => "LockX",
            Self::UnlockX => "UnlockX",
            Self::Rename => "Rename",
            Self::Unlink => "Unlink",
            Self::Deltree => "Deltree",
            Self::Mkdir => "Mkdir",
            Self::Rmdir => "Rmdir",
            Self::QueryPathInformation => "QUERY_PATH_INFORMATION",
            Self::QueryFileInformation => "QUERY_FILE_INFORMATION",
            Self::SetFileInformation => "SET_FILE_INFORMATION",
            Self::QueryFsInformation => "QUERY_FS_INFORMATION",
            Self::FindFirst => "FIND_FIRST",
        }
    }

    /// Dense index (the request class).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The kind a loadfile names, compared without case as dbench does.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name().eq_ignore_ascii_case(name))
    }

    /// (paths, numbers) the line carries between the op name and the status.
    pub fn arity(self) -> (usize, usize) {
        match self {
            Self::NtCreateX => (1, 3),
            Self::Close | Self::Flush => (0, 1),
            Self::ReadX | Self::WriteX => (0, 4),
            Self::LockX | Self::UnlockX => (0, 3),
            Self::Rename => (2, 0),
            Self::Unlink | Self::QueryPathInformation => (1, 1),
            Self::Deltree | Self::Mkdir | Self::Rmdir => (1, 0),
            Self::QueryFileInformation | Self::SetFileInformation => (0, 2),
            Self::QueryFsInformation => (0, 1),
            Self::FindFirst => (1, 3),
        }
    }

    /// Whether dbench's fileio looks the operation's paths up before making
    /// its call (a lookup of its own aside: QUERY_PATH_INFORMATION and a
    /// plain FIND_FIRST are one; a wildcard FIND_FIRST looks its pattern up,
    /// which the listing does itself).
    pub fn looks_up_in_dbench(self) -> bool {
        matches!(self, Self::NtCreateX | Self::Unlink | Self::Mkdir | Self::Rmdir | Self::Rename)
    }

    /// Whether the first number is a loadfile handle (mapped per client).
    pub fn uses_handle(self) -> bool {
        matches!(
            self,
            Self::Close
                | Self::ReadX
                | Self::WriteX
                | Self::Flush
                | Self::LockX
                | Self::UnlockX
                | Self::QueryFileInformation
                | Self::SetFileInformation
        )
    }

    /// What dbench does when the outcome is not the one the line expects.
    pub fn on_mismatch(self) -> Mismatch {
        match self {
            // dbench's fileio ignores these outcomes altogether.
            Self::Deltree | Self::Mkdir | Self::Close | Self::FindFirst => Mismatch::Ignored,
            // The client cannot go on meaningfully: dbench exits it.
            Self::Rmdir | Self::Rename | Self::Unlink | Self::WriteX => Mismatch::Fatal,
            _ => Mismatch::Counted,
        }
    }
}

/// How a mismatch between outcome and expectation is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mismatch {
    /// Not judged at all.
    Ignored,
    /// Counted as a `status` error; the client goes on.
    Counted,
    /// Counted as a `status` error and the client stops for the rest of the run.
    Fatal,
}

/// What a line expects of its operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// `NT_STATUS_OK`, `0x0…0`, `SUCCESS`.
    Success,
    /// Any other status: the operation must fail (the code, when crest knows the name).
    Failure(Option<u32>),
    /// `*`: anything goes.
    Any,
}

impl Expect {
    /// Whether an operation that succeeded (`ok`) met this expectation.
    pub fn met_by(self, ok: bool) -> bool {
        match self {
            Self::Success => ok,
            Self::Failure(_) => !ok,
            Self::Any => true,
        }
    }
}

/// What happened to one operation, as a backend reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// The operation succeeded.
    pub ok: bool,
    /// NTSTATUS of the outcome (SMB), or the errno mapped to one (fileio); 0 when ok.
    pub status: u32,
    /// Data bytes the operation counts toward throughput (reference §4.6:
    /// ReadX its requested size, WriteX its size, nothing else).
    pub bytes: u64,
}

/// The judgement of one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// As expected (or not judged).
    Met,
    /// Not as expected; counted, the client goes on.
    Missed,
    /// Not as expected, and the client must stop.
    Fatal,
}

/// Judges `outcome` of a `kind` operation against what its line expects.
pub fn judge(kind: OpKind, expect: Expect, outcome: &Outcome) -> Verdict {
    if expect.met_by(outcome.ok) {
        return Verdict::Met;
    }
    match kind.on_mismatch() {
        Mismatch::Ignored => Verdict::Met,
        Mismatch::Counted => Verdict::Missed,
        Mismatch::Fatal => Verdict::Fatal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_without_case() {
        for kind in OpKind::ALL {
            assert_eq!(OpKind::parse(kind.name()), Some(kind));
            assert_eq!(OpKind::parse(&kind.name().to_ascii_lowercase()), Some(kind));
            assert_eq!(OpKind::ALL[kind.index()], kind);
        }
        assert_eq!(OpKind::parse("READ3"), None);
    }

    #[test]
    fn mismatches_follow_dbench() {
        let failed = Outcome { ok: false, status: 0xC000_0034, bytes: 0 };
        let ok = Outcome { ok: true, status: 0, bytes: 0 };
        assert_eq!(judge(OpKind::Unlink, Expect::Success, &failed), Verdict::Fatal);
        assert_eq!(judge(OpKind::NtCreateX, Expect::Success, &failed), Verdict::Missed);
        assert_eq!(judge(OpKind::NtCreateX, Expect::Failure(None), &ok), Verdict::Missed);
        assert_eq!(judge(OpKind::NtCreateX, Expect::Failure(None), &failed), Verdict::Met);
        assert_eq!(judge(OpKind::Mkdir, Expect::Success, &failed), Verdict::Met);
        assert_eq!(judge(OpKind::Rename, Expect::Any, &failed), Verdict::Met);
    }
}
