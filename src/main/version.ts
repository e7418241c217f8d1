import pkg from '../../package.json';

export const HOMING_VERSION: string = pkg.version;
