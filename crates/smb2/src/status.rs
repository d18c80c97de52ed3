//! NTSTATUS codes ([MS-ERREF] 2.3.1): the constants this client and dbench's
//! loadfiles use, and the mapping between codes and the `NT_STATUS_*` names
//! loadfiles write in their expected-status column.
//!
//! Owns only the table. What a status means for an operation (which reply's
//! status is decisive) belongs to the operations themselves.

pub const OK: u32 = 0x0000_0000;
pub const PENDING: u32 = 0x0000_0103;
pub const BUFFER_OVERFLOW: u32 = 0x8000_0005;
pub const NO_MORE_FILES: u32 = 0x8000_0006;
pub const NOT_IMPLEMENTED: u32 = 0xC000_0002;
pub const INVALID_INFO_CLASS: u32 = 0xC000_0003;
pub const INFO_LENGTH_MISMATCH: u32 = 0xC000_0004;
pub const INVALID_HANDLE: u32 = 0xC000_0008;
pub const INVALID_PARAMETER: u32 = 0xC000_000D;
pub const NO_SUCH_FILE: u32 = 0xC000_000F;
pub const INVALID_DEVICE_REQUEST: u32 = 0xC000_0010;
pub const END_OF_FILE: u32 = 0xC000_0011;
pub const MORE_PROCESSING_REQUIRED: u32 = 0xC000_0016;
pub const ACCESS_DENIED: u32 = 0xC000_0022;
pub const OBJECT_NAME_INVALID: u32 = 0xC000_0033;
pub const OBJECT_NAME_NOT_FOUND: u32 = 0xC000_0034;
pub const OBJECT_NAME_COLLISION: u32 = 0xC000_0035;
pub const OBJECT_PATH_INVALID: u32 = 0xC000_0039;
pub const OBJECT_PATH_NOT_FOUND: u32 = 0xC000_003A;
pub const OBJECT_PATH_SYNTAX_BAD: u32 = 0xC000_003B;
pub const SHARING_VIOLATION: u32 = 0xC000_0043;
pub const FILE_LOCK_CONFLICT: u32 = 0xC000_0054;
pub const LOCK_NOT_GRANTED: u32 = 0xC000_0055;
pub const DELETE_PENDING: u32 = 0xC000_0056;
pub const NO_SUCH_USER: u32 = 0xC000_0064;
pub const WRONG_PASSWORD: u32 = 0xC000_006A;
pub const LOGON_FAILURE: u32 = 0xC000_006D;
pub const ACCOUNT_RESTRICTION: u32 = 0xC000_006E;
pub const PASSWORD_EXPIRED: u32 = 0xC000_0071;
pub const ACCOUNT_DISABLED: u32 = 0xC000_0072;
pub const RANGE_NOT_LOCKED: u32 = 0xC000_007E;
pub const DISK_FULL: u32 = 0xC000_007F;
pub const INSUFFICIENT_RESOURCES: u32 = 0xC000_009A;
pub const FILE_IS_A_DIRECTORY: u32 = 0xC000_00BA;
pub const NOT_SUPPORTED: u32 = 0xC000_00BB;
pub const NETWORK_NAME_DELETED: u32 = 0xC000_00C9;
pub const BAD_NETWORK_NAME: u32 = 0xC000_00CC;
pub const REQUEST_NOT_ACCEPTED: u32 = 0xC000_00D0;
pub const NOT_SAME_DEVICE: u32 = 0xC000_00D4;
pub const DIRECTORY_NOT_EMPTY: u32 = 0xC000_0101;
pub const NOT_A_DIRECTORY: u32 = 0xC000_0103;
pub const CANCELLED: u32 = 0xC000_0120;
pub const CANNOT_DELETE: u32 = 0xC000_0121;
pub const FILE_CLOSED: u32 = 0xC000_0128;
pub const USER_SESSION_DELETED: u32 = 0xC000_0203;
pub const NETWORK_SESSION_EXPIRED: u32 = 0xC000_035C;

/// Every code this module names, with its loadfile spelling.
const TABLE: &[(u32, &str)] = &[
    (OK, "NT_STATUS_OK"),
    (PENDING, "NT_STATUS_PENDING"),
    (BUFFER_OVERFLOW, "NT_STATUS_BUFFER_OVERFLOW"),
    (NO_MORE_FILES, "NT_STATUS_NO_MORE_FILES"),
    (NOT_IMPLEMENTED, "NT_STATUS_NOT_IMPLEMENTED"),
    (INVALID_INFO_CLASS, "NT_STATUS_INVALID_INFO_CLASS"),
    (INFO_LENGTH_MISMATCH, "NT_STATUS_INFO_LENGTH_MISMATCH"),
    (INVALID_HANDLE, "NT_STATUS_INVALID_HANDLE"),
    (INVALID_PARAMETER, "NT_STATUS_INVALID_PARAMETER"),
    (NO_SUCH_FILE, "NT_STATUS_NO_SUCH_FILE"),
    (INVALID_DEVICE_REQUEST, "NT_STATUS_INVALID_DEVICE_REQUEST"),
    (END_OF_FILE, "NT_STATUS_END_OF_FILE"),
    (MORE_PROCESSING_REQUIRED, "NT_STATUS_MORE_PROCESSING_REQUIRED"),
    (ACCESS_DENIED, "NT_STATUS_ACCESS_DENIED"),
    (OBJECT_NAME_INVALID, "NT_STATUS_OBJECT_NAME_INVALID"),
    (OBJECT_NAME_NOT_FOUND, "NT_STATUS_OBJECT_NAME_NOT_FOUND"),
    (OBJECT_NAME_COLLISION, "NT_STATUS_OBJECT_NAME_COLLISION"),
    (OBJECT_PATH_INVALID, "NT_STATUS_OBJECT_PATH_INVALID"),
    (OBJECT_PATH_NOT_FOUND, "NT_STATUS_OBJECT_PATH_NOT_FOUND"),
    (OBJECT_PATH_SYNTAX_BAD, "NT_STATUS_OBJECT_PATH_SYNTAX_BAD"),
    (SHARING_VIOLATION, "NT_STATUS_SHARING_VIOLATION"),
    (FILE_LOCK_CONFLICT, "NT_STATUS_FILE_LOCK_CONFLICT"),
    (LOCK_NOT_GRANTED, "NT_STATUS_LOCK_NOT_GRANTED"),
    (DELETE_PENDING, "NT_STATUS_DELETE_PENDING"),
    (NO_SUCH_USER, "NT_STATUS_NO_SUCH_USER"),
    (WRONG_PASSWORD, "NT_STATUS_WRONG_PASSWORD"),
    (LOGON_FAILURE, "NT_STATUS_LOGON_FAILURE"),
    (ACCOUNT_RESTRICTION, "NT_STATUS_ACCOUNT_RESTRICTION"),
    (PASSWORD_EXPIRED, "NT_STATUS_PASSWORD_EXPIRED"),
    (ACCOUNT_DISABLED, "NT_STATUS_ACCOUNT_DISABLED"),
    (RANGE_NOT_LOCKED, "NT_STATUS_RANGE_NOT_LOCKED"),
    (DISK_FULL, "NT_STATUS_DISK_FULL"),
    (INSUFFICIENT_RESOURCES, "NT_STATUS_INSUFFICIENT_RESOURCES"),
    (FILE_IS_A_DIRECTORY, "NT_STATUS_FILE_IS_A_DIRECTORY"),
    (NOT_SUPPORTED, "NT_STATUS_NOT_SUPPORTED"),
    (NETWORK_NAME_DELETED, "NT_STATUS_NETWORK_NAME_DELETED"),
    (BAD_NETWORK_NAME, "NT_STATUS_BAD_NETWORK_NAME"),
    (REQUEST_NOT_ACCEPTED, "NT_STATUS_REQUEST_NOT_ACCEPTED"),
    (NOT_SAME_DEVICE, "NT_STATUS_NOT_SAME_DEVICE"),
    (DIRECTORY_NOT_EMPTY, "NT_STATUS_DIRECTORY_NOT_EMPTY"),
    (NOT_A_DIRECTORY, "NT_STATUS_NOT_A_DIRECTORY"),
    (CANCELLED, "NT_STATUS_CANCELLED"),
    (CANNOT_DELETE, "NT_STATUS_CANNOT_DELETE"),
    (FILE_CLOSED, "NT_STATUS_FILE_CLOSED"),
    (USER_SESSION_DELETED, "NT_STATUS_USER_SESSION_DELETED"),
    (NETWORK_SESSION_EXPIRED, "NT_STATUS_NETWORK_SESSION_EXPIRED"),
];

/// What `name` answers for a code missing from the table.
pub const UNKNOWN_NAME: &str = "NT_STATUS_UNKNOWN";

/// The code for a loadfile status: `NT_STATUS_OBJECT_NAME_NOT_FOUND`, the
/// same without the `NT_STATUS_` prefix (any case), or a hex code such as
/// `0xC0000034`. `None` for a name this table lacks.
pub fn code(name: &str) -> Option<u32> {
    if let Some(hex) = name.strip_prefix("0x").or_else(|| name.strip_prefix("0X")) {
        return u32::from_str_radix(hex, 16).ok();
    }
    let prefixed = name.get(..10).is_some_and(|p| p.eq_ignore_ascii_case("NT_STATUS_"));
    let wanted = if prefixed { &name[10..] } else { name };
    TABLE.iter().find(|(_, n)| n[10..].eq_ignore_ascii_case(wanted)).map(|&(c, _)| c)
}

/// The loadfile spelling of a code (`NT_STATUS_OK`), or [`UNKNOWN_NAME`].
pub fn name(code: u32) -> &'static str {
    TABLE.iter().find(|&&(c, _)| c == code).map_or(UNKNOWN_NAME, |&(_, n)| n)
}

/// Severity "error" (the top two bits set); warnings such as
/// `BUFFER_OVERFLOW` and `NO_MORE_FILES` are not errors.
pub fn is_error(code: u32) -> bool {
    code >> 30 == 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes_round_trip() {
        for &(c, n) in TABLE {
            assert_eq!(code(n), Some(c), "{n}");
            assert_eq!(name(c), n);
        }
        assert_eq!(TABLE.iter().filter(|(c, _)| *c == ACCESS_DENIED).count(), 1);
    }

    #[test]
    fn loadfile_spellings() {
        assert_eq!(code("NT_STATUS_OBJECT_NAME_NOT_FOUND"), Some(0xC000_0034));
        assert_eq!(code("object_name_collision"), Some(0xC000_0035));
        assert_eq!(code("nt_status_ok"), Some(0));
        assert_eq!(code("0xC0000055"), Some(LOCK_NOT_GRANTED));
        assert_eq!(code("NT_STATUS_NO_SUCH_THING"), None);
        assert_eq!(code("0xZZ"), None);
        assert_eq!(name(0x1234_5678), UNKNOWN_NAME);
    }

    #[test]
    fn severity() {
        assert!(is_error(OBJECT_NAME_NOT_FOUND));
        assert!(!is_error(NO_MORE_FILES));
        assert!(!is_error(OK));
    }
}
