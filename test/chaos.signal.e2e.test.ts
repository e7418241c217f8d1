import { defineChaosSuite } from './chaos/suite';

defineChaosSuite('signal');
