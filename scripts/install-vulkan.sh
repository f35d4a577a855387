#!/usr/bin/env bash
# Makes sure a Vulkan driver is present: on a machine without one (no GPU, CI), installs Mesa's
# lavapipe, which runs Vulkan compute on the CPU. Debian/Ubuntu; a no-op where a driver exists.
set -euo pipefail

have_loader() { ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; }
have_icd() { ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json >/dev/null 2>&1; }

if have_loader && have_icd; then
    exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-vulkan: no Vulkan driver found; installing mesa-vulkan-drivers (lavapipe) and libvulkan1" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends mesa-vulkan-drivers libvulkan1 >/dev/null
