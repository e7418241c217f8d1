import { defineChaosSuite } from './chaos/suite';

defineChaosSuite('email');
