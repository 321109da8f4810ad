# The package version; released with the ctxc service of the same version (see ../../VERSION).
__version__ = "0.1.0"
