/** The package version; released with the ctxc service of the same version (see ../../VERSION). */
export const VERSION = "0.1.0";
