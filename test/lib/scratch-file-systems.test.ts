import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { FleetNetwork, ScratchFileSystems } from '../../lib';
import { testStack } from './support';

function scratchRoleTemplate(): Template {
  const stack = testStack();
  const network = new FleetNetwork(stack, 'Network', { azIds: ['use1-az4'] });
  const scratch = new ScratchFileSystems(stack, 'Scratch', { fleetId: 'train', network });
  const role = new iam.Role(stack, 'Role', { assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com') });
  scratch.grantCreateAndDelete(role);
  return Template.fromStack(stack);
}

describe('ScratchFileSystems owner re-tag', () => {
  test('lets a re-run move mountfleet:owner-instance on its own fleet file systems, and nothing else', () => {
    scratchRoleTemplate().hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Action: 'elasticfilesystem:TagResource',
            Effect: 'Allow',
            Resource: {
              'Fn::Join': [
                '',
                [
                  'arn:',
                  { Ref: 'AWS::Partition' },
                  ':elasticfilesystem:us-east-1:',
                  { Ref: 'AWS::AccountId' },
                  ':file-system/*',
                ],
              ],
            },
            Condition: {
              StringEquals: { 'aws:ResourceTag/mountfleet:fleet': 'train' },
              'ForAllValues:StringEquals': { 'aws:TagKeys': ['mountfleet:owner-instance'] },
              Null: { 'aws:TagKeys': 'false' },
            },
          },
        ]),
      },
    });
  });
});
