//! Environment requirements of a scenario: present, UTF-8, non-empty, unpadded, JSON where due.
