//! Information classes for QUERY_INFO, SET_INFO and QUERY_DIRECTORY
//! ([MS-FSCC] 2.4 and 2.5). Owns only the constants.

/// InfoType of QUERY_INFO / SET_INFO.
pub(crate) const TYPE_FILE: u8 = 1;
pub(crate) const TYPE_FILESYSTEM: u8 = 2;

/// FileInformationClass values.
pub mod file {
    pub const DIRECTORY: u8 = 1;
    pub const FULL_DIRECTORY: u8 = 2;
    pub const BOTH_DIRECTORY: u8 = 3;
    pub const BASIC: u8 = 4;
    pub const STANDARD: u8 = 5;
    pub const INTERNAL: u8 = 6;
    pub const EA: u8 = 7;
    pub const ACCESS: u8 = 8;
    pub const NAMES: u8 = 12;
    pub const RENAME: u8 = 10;
    pub const DISPOSITION: u8 = 13;
    pub const POSITION: u8 = 14;
    pub const ALL: u8 = 18;
    pub const ALLOCATION: u8 = 19;
    pub const END_OF_FILE: u8 = 20;
    pub const STREAM: u8 = 22;
    pub const NETWORK_OPEN: u8 = 34;
    pub const ATTRIBUTE_TAG: u8 = 35;
}

/// FsInformationClass values.
pub mod fs {
    pub const VOLUME: u8 = 1;
    pub const SIZE: u8 = 3;
    pub const DEVICE: u8 = 4;
    pub const ATTRIBUTE: u8 = 5;
    pub const FULL_SIZE: u8 = 7;
    pub const OBJECT_ID: u8 = 8;
}
