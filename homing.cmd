@echo off
rem `homing ...` in the checkout on Windows: the CLI at once (npx homing is slower).
node "%~dp0bin\homing.js" %*
