//! The numbers a CREATE request takes ([MS-SMB2] 2.2.13, [MS-FSCC] 2.6):
//! access masks, share access, dispositions, options and attributes. They are
//! the NT values dbench's NTCreateX lines carry, so a loadfile's numbers pass
//! through unchanged. Owns only the constants.

/// DesiredAccess bits.
pub mod access {
    pub const READ_DATA: u32 = 0x0000_0001;
    pub const LIST_DIRECTORY: u32 = 0x0000_0001;
    pub const WRITE_DATA: u32 = 0x0000_0002;
    pub const APPEND_DATA: u32 = 0x0000_0004;
    pub const READ_EA: u32 = 0x0000_0008;
    pub const WRITE_EA: u32 = 0x0000_0010;
    pub const EXECUTE: u32 = 0x0000_0020;
    pub const READ_ATTRIBUTES: u32 = 0x0000_0080;
    pub const WRITE_ATTRIBUTES: u32 = 0x0000_0100;
    pub const DELETE: u32 = 0x0001_0000;
    pub const READ_CONTROL: u32 = 0x0002_0000;
    pub const SYNCHRONIZE: u32 = 0x0010_0000;
    pub const MAXIMUM_ALLOWED: u32 = 0x0200_0000;
    pub const GENERIC_ALL: u32 = 0x1000_0000;
    pub const GENERIC_WRITE: u32 = 0x4000_0000;
    pub const GENERIC_READ: u32 = 0x8000_0000;
}

/// ShareAccess bits.
pub mod share {
    pub const READ: u32 = 0x1;
    pub const WRITE: u32 = 0x2;
    pub const DELETE: u32 = 0x4;
    pub const ALL: u32 = READ | WRITE | DELETE;
}

/// CreateDisposition values.
pub mod disposition {
    pub const SUPERSEDE: u32 = 0;
    pub const OPEN: u32 = 1;
    pub const CREATE: u32 = 2;
    pub const OPEN_IF: u32 = 3;
    pub const OVERWRITE: u32 = 4;
    pub const OVERWRITE_IF: u32 = 5;
}

/// CreateOptions bits.
pub mod options {
    pub const DIRECTORY_FILE: u32 = 0x0000_0001;
    pub const WRITE_THROUGH: u32 = 0x0000_0002;
    pub const SEQUENTIAL_ONLY: u32 = 0x0000_0004;
    pub const NON_DIRECTORY_FILE: u32 = 0x0000_0040;
    pub const DELETE_ON_CLOSE: u32 = 0x0000_1000;
}

/// FileAttributes bits.
pub mod attributes {
    pub const READONLY: u32 = 0x0000_0001;
    pub const HIDDEN: u32 = 0x0000_0002;
    pub const SYSTEM: u32 = 0x0000_0004;
    pub const DIRECTORY: u32 = 0x0000_0010;
    pub const ARCHIVE: u32 = 0x0000_0020;
    pub const NORMAL: u32 = 0x0000_0080;
}
